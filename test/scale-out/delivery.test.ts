/**
 * Two collector processes on one PostgreSQL database share delivery (docs/api.md#delivery): every
 * event arrives, each session's in order, no batch is sent twice at once, a change made through one
 * process applies in the other, and when the delivering process is killed the other takes over.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import { testSchema, usePostgres } from '../support/postgres.js';
import { startReceiver, until } from '../support/receiver.js';
import { ok, sql, startCollector, type Collector, type Json } from './support.js';

usePostgres();

async function load(collectors: Collector[], clients: number, perClient: number, tag: string) {
  const sent: string[][] = [];
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      const mine: string[] = [];
      sent[c] = mine;
      for (let i = 0; i < perClient; i++) {
        const answer = await collectors[(c + i) % collectors.length]!.post('/track', {
          source: { id: 'web' },
          session: { id: `${tag}-${c}` },
          options: { debugger: true },
          events: [{ type: 'page-view', properties: { i } }],
        });
        mine.push(...(ok(answer).debugging.events.ids as string[]));
      }
    }),
  );
  return sent;
}

function assertInOrder(delivered: string[], sent: string[][]): void {
  for (const mine of sent) {
    const set = new Set(mine);
    const seen = delivered.filter((id) => set.has(id));
    assert.deepEqual([...new Set(seen)], mine, 'each session in the order stored');
  }
}

test('two collectors share delivery; one killed, the other takes over', async (t) => {
  const url = await testSchema();
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const env = { TRACK_DELIVERY_LEASE: '15' };
  const a = await startCollector(t, url, env);
  const b = await startCollector(t, url, env);
  ok(await a.manage('POST', '/event-source', { id: 'web' }));
  ok(await a.manage('POST', '/destination', { id: 'one', url: receiver.url, batch_size: 20 }));
  ok(await b.manage('POST', '/destination', { id: 'two', url: `${receiver.url}?two`, batch_size: 7 }));

  const sent = await load([a, b], 12, 15, 'first');
  const total = sent.flat().length;
  const deliveredTo = (dest: string) =>
    receiver.received
      .filter((r) => r.body.destination === dest && r.acknowledged)
      .flatMap((r) => r.body.events.map((e) => e.id));
  await until(
    () => deliveredTo('one').length >= total && deliveredTo('two').length >= total,
    'all delivered',
    60_000,
  );
  for (const dest of ['one', 'two']) {
    const ids = deliveredTo(dest);
    assert.equal(ids.length, total, `${dest}: no duplicates without a lost answer`);
    assert.equal(new Set(ids).size, total);
    assertInOrder(ids, sent);
  }
  assert.equal(receiver.maxConcurrentSameId, 1, 'no batch sent twice at once');
  // The receiver has the last batch before the delivering process records it as delivered.
  const status = async () => ok(await b.manage('GET', '/destination/one')).status as Json;
  await until(async () => (await status()).pending === 0, 'the last batch recorded', 10_000);
  assert.equal((await status()).delivered, total);

  // A change through one process applies in the other: disabled, nothing more is sent.
  ok(await b.manage('POST', '/destination', { id: 'two', url: `${receiver.url}?two`, enabled: false }));
  const toTwo = () => receiver.received.filter((r) => r.body.destination === 'two').length;
  const sentToTwo = toTwo();
  await load([a, b], 2, 3, 'paused');
  await until(
    async () => (ok(await a.manage('GET', '/destination/one')).status as Json).pending === 0,
    'one delivers',
  );
  assert.equal(toTwo(), sentToTwo);
  assert.equal((ok(await a.manage('GET', '/destination/two')).status as Json).pending, 6);

  // Kill the process delivering `one` with a batch in flight; the other takes over after the lease.
  receiver.behave = (r) => (r.body.destination === 'one' ? 'hang' : { status: 200 });
  const inFlight = (await load([a, b], 1, 1, 'in-flight')).flat();
  await until(
    () => receiver.received.some((r) => r.body.events.some((e) => e.id === inFlight[0])),
    'in flight',
  );
  const [row] = await sql<{ owner: string }>(
    url,
    "SELECT lease_owner AS owner FROM destinations WHERE id = 'one'",
  );
  const victim = row!.owner.split(':')[1] === String(a.child.pid) ? a : b;
  const survivor = victim === a ? b : a;
  victim.child.kill('SIGKILL');
  await once(victim.child, 'exit');
  receiver.behave = () => ({ status: 200 });
  const more = (await load([survivor], 3, 4, 'after-kill')).flat();
  await until(
    async () => (ok(await survivor.manage('GET', '/destination/one')).status as Json).pending === 0,
    'the survivor delivers',
    90_000,
  );
  const ids = new Set(deliveredTo('one'));
  for (const id of [...inFlight, ...more]) assert.ok(ids.has(id), `${id} delivered after the kill`);
});
