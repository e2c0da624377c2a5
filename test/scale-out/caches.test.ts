/**
 * Caches across two collector processes on one PostgreSQL database (docs/api.md #schema-cache, #source-rules): a schema
 * or a source changed through one process reaches the other at once through LISTEN/NOTIFY, however
 * long the TTLs; without notifications (TRACK_PG_NOTIFY=no) the TTLs alone are the bound.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testSchema, usePostgres } from '../support/postgres.js';
import { ok, poll, startCollector, track, type Collector, type Json } from './support.js';

usePostgres();

let sessions = 0;

/** A purchase without a price, on a session of its own (each request is a first visit). */
function purchase(body: Json = { currency: 'EUR' }, source = 'web'): Json {
  return track(`purchase-${sessions++}`, {
    source: { id: source },
    events: [{ type: 'purchase', properties: body }],
  });
}

const requiring = (property: string) => ({
  event_type: 'purchase',
  name: 'Purchase',
  validation: {
    enabled: true,
    json_schema: { 'event@properties': { type: 'object', required: [property] } },
  },
});

/** The status of one purchase without a price sent to `collector`. */
const statusOf = async (collector: Collector, source = 'web') =>
  (await collector.post('/track', purchase(undefined, source))).status;

test('with LISTEN/NOTIFY, changes made through one process apply on the other at once, whatever the TTLs', async (t) => {
  const url = await testSchema();
  const hour = { EVENT_VALIDATOR_TTL: '3600', TRACK_SOURCE_TTL: '3600' };
  const [a, b] = await Promise.all([startCollector(t, url, hour), startCollector(t, url, hour)]);
  ok(await a.manage('POST', '/event-source', { id: 'web', name: 'Web' }));

  await t.test('a schema saved, replaced and deleted on A applies on B within a second', async () => {
    // B has cached "no schema for purchase" for an hour.
    ok(await b.post('/track', purchase()));
    ok(await a.manage('POST', '/event/management', requiring('price')));
    const saved = await poll(
      () => statusOf(b),
      (s) => s === 406,
      'the new schema on B',
    );
    t.diagnostic(`schema saved on A refused on B after ${saved.elapsedMs} ms`);
    const refused = await b.post('/track', purchase());
    assert.equal(refused.status, 406);
    assert.equal(
      refused.body.detail,
      "validation failed with error: event@properties: 'price' is a required property",
    );

    // Replaced: B now wants a currency, and the purchase without a price but with one passes.
    ok(await a.manage('POST', '/event/management', requiring('currency')));
    await poll(
      () => statusOf(b),
      (s) => s === 200,
      'the replaced schema on B',
    );
    assert.equal((await b.post('/track', purchase({ price: 1 }))).status, 406);

    ok(await a.manage('DELETE', '/event/management/purchase'));
    await poll(
      async () => (await b.post('/track', purchase({ price: 1 }))).status,
      (s) => s === 200,
      'the deleted schema on B',
    );
  });

  await t.test(
    'a source disabled on A answers 401 on B within a second; enabled and deleted too',
    async () => {
      ok(await b.post('/track', track('source-cached')));
      ok(await a.manage('POST', '/event-source', { id: 'web', name: 'Web', enabled: false }));
      const disabled = await poll(
        () => b.post('/track', track(`disabled-${sessions++}`)),
        (answer) => answer.status === 401,
        'the disabled source on B',
      );
      assert.deepEqual(disabled.value.body, { detail: 'Event source disabled.' });
      t.diagnostic(`source disabled on A refused on B after ${disabled.elapsedMs} ms`);

      ok(await a.manage('POST', '/event-source', { id: 'web', name: 'Web', enabled: true }));
      await poll(
        () => statusOf(b),
        (s) => s === 200,
        'the enabled source on B',
      );

      ok(await a.manage('DELETE', '/event-source/web'));
      const deleted = await poll(
        () => b.post('/track', track(`deleted-${sessions++}`)),
        (answer) => answer.status === 401,
        'the deleted source on B',
      );
      assert.deepEqual(deleted.value.body, { detail: 'Invalid event source `web`' });
    },
  );
});

test('with TRACK_PG_NOTIFY=no, the TTLs alone bound how long a process keeps a changed schema or source', async (t) => {
  const url = await testSchema();
  const ttlSec = 5;
  const a = await startCollector(t, url);
  const b = await startCollector(t, url, {
    TRACK_PG_NOTIFY: 'no',
    EVENT_VALIDATOR_TTL: String(ttlSec),
    TRACK_SOURCE_TTL: String(ttlSec),
  });
  ok(await a.manage('POST', '/event-source', { id: 'web', name: 'Web' }));
  ok(await a.manage('POST', '/event-source', { id: 'shop', name: 'Shop' }));
  let staleSeen = 0;

  /**
   * `cache` runs the first request that makes B cache an entry; `change` changes it through A.
   * Right after the change, B still answers from its cache when its answer comes back before the
   * entry can have expired (the entry was loaded after `loadedAfter`): no notification reached it.
   * Then B applies the change within the TTL (polled up to TTL + 15 s: the machine may be slow).
   */
  async function staleThenApplied(
    what: string,
    cache: () => Promise<void>,
    change: () => Promise<void>,
    probe: () => Promise<number>,
    stale: number,
    fresh: number,
  ): Promise<void> {
    const loadedAfter = Date.now();
    await cache();
    await change();
    const status = await probe();
    if (Date.now() < loadedAfter + ttlSec * 1000) {
      assert.equal(status, stale, `${what}: B answered from its cache before the TTL ended`);
      staleSeen++;
    }
    const applied = await poll(probe, (s) => s === fresh, `${what} on B`, ttlSec * 1000 + 15_000);
    t.diagnostic(`${what}: applied on B ${applied.elapsedMs} ms after the first check`);
  }

  await staleThenApplied(
    'a schema saved on A',
    async () => void ok(await b.post('/track', purchase())),
    async () => void ok(await a.manage('POST', '/event/management', requiring('price'))),
    () => statusOf(b),
    200,
    406,
  );
  await staleThenApplied(
    'a source disabled on A',
    async () => void ok(await b.post('/track', purchase({ price: 1 }, 'shop'))),
    async () => void ok(await a.manage('POST', '/event-source', { id: 'shop', enabled: false })),
    async () => (await b.post('/track', purchase({ price: 1 }, 'shop'))).status,
    200,
    401,
  );
  // On a machine so slow that no check came back within the TTL there is nothing to conclude from.
  if (staleSeen === 0) t.diagnostic('no check answered within the TTL: staleness not observed');
});
