/**
 * Hostile traffic with nothing but a public source id must leave memory bounded
 * (docs/security.md): unknown source ids and unknown event types are remembered in bounded caches.
 * The heap may grow at first (caches filling, buffers of the server), then it must stay flat:
 * unbounded, the second half of each flood alone grew it by well over 20 MB.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import v8 from 'node:v8';
import vm from 'node:vm';
import { startService, type Json } from '../helpers.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

function heapMb(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 1024 / 1024;
}

/** Most the heap may grow over a whole flood, and over its second half (where it must be flat). */
const TOTAL_MB = 40;
const SECOND_HALF_MB = 8;

/** Sends `rounds` rounds and returns the heap before, half-way and after. */
async function flood(rounds: number, round: (n: number) => Promise<void>): Promise<number[]> {
  const marks = [heapMb()];
  for (let n = 0; n < rounds; n++) {
    await round(n);
    if (n === rounds / 2 - 1) marks.push(heapMb());
  }
  marks.push(heapMb());
  return marks;
}

function assertBounded(what: string, [before, half, after]: number[]): void {
  assert.ok(after! - before! < TOTAL_MB, `${what}: the heap grew by ${(after! - before!).toFixed(1)} MB`);
  assert.ok(
    after! - half! < SECOND_HALF_MB,
    `${what}: the heap kept growing (${(after! - half!).toFixed(1)} MB)`,
  );
}

test(
  '200k unknown source ids and 200k unknown event types leave the heap bounded',
  { timeout: 300_000 },
  async (t) => {
    const service = await startService();
    t.after(() => service.close());
    await service.createSource();
    const post = (body: Json) => service.post('/track', body);
    const visit = (source: string, events: Json[], session = 's') =>
      post({ source: { id: source }, session: { id: session }, events });

    // Warm-up: the routes, the validator and the store's statements exist before the baseline.
    for (let i = 0; i < 200; i++) await visit(`warm-${i}`, [{ type: 't' }]);

    const sources = await flood(200, async (n) => {
      const answers = await Promise.all(
        Array.from({ length: 1000 }, (_, i) => visit(`unknown-${n}-${i}`, [{ type: 't' }])),
      );
      for (const res of answers) assert.equal(res.statusCode, 401);
    });
    const types = await flood(200, async (n) => {
      const events = Array.from({ length: 1000 }, (_, i) => ({
        type: `type-${n}-${i}`,
        options: { save: false },
      }));
      const res = await visit('src-1', events, `s-${n}`);
      assert.equal(res.statusCode, 200, res.body);
    });

    const show = (marks: number[]) => marks.map((mb) => mb.toFixed(1)).join(' → ');
    t.diagnostic(`heap MB, unknown sources: ${show(sources)}; unknown event types: ${show(types)}`);
    assertBounded('200k unknown source ids', sources);
    assertBounded('200k unknown event types', types);
  },
);
