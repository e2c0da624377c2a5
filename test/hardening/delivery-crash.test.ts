/**
 * Delivery survives kill -9 (docs/api.md#delivery-guarantees): the service is killed while it
 * tracks and delivers under load; once restarted on the same data folder, the receiver gets every
 * acknowledged event (duplicates allowed: the crash may lose answers).
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { tempDir, TOKEN, type Json } from '../helpers.js';
import { freePort, spawnServer, waitForHealth } from '../support/process.js';
import { startReceiver, until } from '../support/receiver.js';

const CLIENTS = 16;

async function start(dataDir: string) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = spawnServer({
    PORT: String(port),
    TRACK_DATA_DIR: dataDir,
    TRACK_API_TOKEN: TOKEN,
    DATABASE_URL: '',
  });
  await waitForHealth(base, server.child, server.output);
  return { ...server, base };
}

test('kill -9 during delivery under load: every acknowledged event is delivered after the restart', async (t) => {
  const dataDir = tempDir();
  const receiver = await startReceiver();
  // The receiver is slow enough that batches are in flight when the process dies.
  receiver.behave = (_r, i) => (i % 7 === 3 ? { status: 503 } : { status: 200 });
  const first = await start(dataDir);
  t.after(async () => {
    if (first.child.exitCode === null && first.child.signalCode === null) first.child.kill('SIGKILL');
    await receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
  const manage = (base: string, path: string, body: Json) =>
    fetch(`${base}${path}`, { method: 'POST', headers: auth, body: JSON.stringify(body) });
  assert.equal((await manage(first.base, '/event-source', { id: 'web' })).status, 200);
  assert.equal(
    (await manage(first.base, '/destination', { id: 'd', url: receiver.url, batch_size: 25 })).status,
    200,
  );

  const acknowledged = new Set<string>();
  let killed = false;
  const client = async (n: number) => {
    for (let i = 0; !killed; i++) {
      try {
        const res = await fetch(`${first.base}/track`, {
          method: 'POST',
          body: JSON.stringify({
            source: { id: 'web' },
            session: { id: `c${n}-${i % 4}` },
            options: { debugger: true },
            events: Array.from({ length: 1 + (i % 3) }, (_, k) => ({ type: `t${k}`, properties: { n, i } })),
          }),
        });
        const body = (await res.json()) as Json;
        if (res.status === 200) for (const id of body.debugging.events.ids as string[]) acknowledged.add(id);
      } catch (error) {
        if (!killed) throw error;
      }
    }
  };
  const load = Promise.all(Array.from({ length: CLIENTS }, (_, n) => client(n)));
  await until(() => receiver.deliveredIds().length > 200, 'delivery under way', 60_000);
  killed = true;
  first.child.kill('SIGKILL');
  await once(first.child, 'exit');
  await load;
  const deliveredBefore = new Set(receiver.deliveredIds());
  assert.ok(acknowledged.size > deliveredBefore.size, 'the kill left events to deliver');

  const second = await start(dataDir);
  t.after(async () => {
    second.child.kill('SIGTERM');
    await once(second.child, 'exit');
  });
  await until(
    () => {
      const delivered = new Set(receiver.deliveredIds());
      for (const id of acknowledged) if (!delivered.has(id)) return false;
      return true;
    },
    'every acknowledged event delivered',
    90_000,
  );
  // Events committed but not acknowledged (their answers lost in the kill) follow too.
  const pending = async () =>
    ((await (await fetch(`${second.base}/destination/d`, { headers: auth })).json()) as Json).status.pending;
  await until(async () => (await pending()) === 0, 'nothing pending', 60_000);
  const distinct = new Set(receiver.deliveredIds());
  assert.ok(distinct.size >= acknowledged.size);
  t.diagnostic(
    `acknowledged ${acknowledged.size}, delivered before the kill ${deliveredBefore.size}, ` +
      `received ${receiver.deliveredIds().length} (${receiver.deliveredIds().length - distinct.size} duplicates)`,
  );
});
