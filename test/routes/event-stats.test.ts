/**
 * GET /events/stats (docs/api.md#event-stats), on both stores: events per minute and type, counted
 * by the store over a bounded window, with the most frequent types by name and the others together.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { EventRecord } from '../../src/model/records.js';
import { PostgresStore } from '../../src/storage/postgres/store.js';
import { SqliteStore } from '../../src/storage/sqlite/store.js';
import type { Store } from '../../src/storage/store.js';
import { payload, startService, tempDir, type Service } from '../helpers.js';
import { testSchema, usePostgres } from '../support/postgres.js';
import { event } from '../storage/contract.js';
import { STORES } from './profiles-support.js';
import { expectError, expectFieldError, expectStatus, type Json } from './support.js';

usePostgres();

const MINUTE = 60_000;
/** A whole minute well in the past, so that nothing the tests send now falls in its windows. */
const T = Math.floor((Date.now() - 6 * 3_600_000) / MINUTE) * MINUTE;
const iso = (ms: number) => new Date(ms).toISOString();

/** An event of `type` inserted `ms` after T, of source `source`. */
function stored(id: string, type: string, ms: number, source = 'src-1'): EventRecord {
  return event(id, { type, source: { id: source } }, iso(T + ms));
}

for (const store of STORES) {
  describe(`GET /events/stats (${store})`, () => {
    let service: Service;
    let opened: Store;
    before(async () => {
      const dataDir = tempDir();
      opened =
        store === 'sqlite'
          ? new SqliteStore({ dataDir, sync: 'normal', writeQueueLimit: 10_000 })
          : new PostgresStore({ url: await testSchema(), writeQueueLimit: 10_000 });
      service = await startService({ dataDir }, { store: opened });
      await service.createSource();
    });
    after(() => service.close());

    const stats = async (query: string) => expectStatus(await service.get(`/events/stats?${query}`), 200);

    test('counts per type per minute, most frequent type first; minutes without events are left out', async () => {
      const commit = async (events: EventRecord[]) =>
        assert.equal((await opened.commit({ events })).ok, true);
      // Minute 0: a run of one type (3 events), and a write set mixing types (one run of several
      // types on the embedded store).
      await commit([stored('a1', 'view', 1000), stored('a2', 'view', 1000), stored('a3', 'view', 1000)]);
      await commit([stored('b1', 'view', 20_000), stored('b2', 'buy', 20_000), stored('b3', 'view', 20_000)]);
      // Minute 2, one event at its last millisecond, and one on another source.
      await commit([stored('c1', 'buy', 2 * MINUTE), stored('c2', 'view', 3 * MINUTE - 1)]);
      await commit([stored('c3', 'view', 2 * MINUTE + 5, 'src-2')]);
      // Outside the window: just before and at its end.
      await commit([stored('x1', 'view', -1), stored('x2', 'view', 5 * MINUTE)]);

      const body = await stats(`since=${iso(T)}&until=${iso(T + 5 * MINUTE)}`);
      assert.deepEqual(body, {
        since: iso(T),
        until: iso(T + 5 * MINUTE),
        total: 9,
        types: [
          { type: 'view', total: 7 },
          { type: 'buy', total: 2 },
        ],
        other: { types: 0, total: 0 },
        minutes: [
          { minute: iso(T), total: 6, counts: [5, 1], other: 0 },
          { minute: iso(T + 2 * MINUTE), total: 3, counts: [2, 1], other: 0 },
        ],
      });

      const bySource = await stats(`since=${iso(T)}&until=${iso(T + 5 * MINUTE)}&source_id=src-2`);
      assert.deepEqual(bySource.minutes, [{ minute: iso(T + 2 * MINUTE), total: 1, counts: [1], other: 0 }]);
      const byType = await stats(`since=${iso(T)}&until=${iso(T + 5 * MINUTE)}&type=buy`);
      assert.deepEqual(byType.types, [{ type: 'buy', total: 2 }]);
      assert.deepEqual(
        byType.minutes.map((m: Json) => [m.minute, m.counts]),
        [
          [iso(T), [1]],
          [iso(T + 2 * MINUTE), [1]],
        ],
      );
      // `since` is moved back to the start of its minute: minute 0 is counted whole.
      const moved = await stats(`since=${iso(T + 30_000)}&until=${iso(T + MINUTE)}`);
      assert.equal(moved.since, iso(T));
      assert.equal(moved.total, 6);
      // A time with an offset is the same instant.
      const offset = await stats(
        `since=${encodeURIComponent(iso(T).replace('Z', '+00:00'))}&until=${iso(T + MINUTE)}`,
      );
      assert.equal(offset.total, 6);
    });

    test('at most 20 types by name; the others are counted together', async () => {
      const base = 60 * MINUTE;
      const events: EventRecord[] = [];
      // Type t00 has 25 events, t01 24, … t24 1: t20 to t24 (5 types, 15 events) are "other".
      for (let i = 0; i < 25; i++) {
        for (let k = 0; k < 25 - i; k++)
          events.push(stored(`t${i}-${k}`, `t${String(i).padStart(2, '0')}`, base + i));
      }
      assert.equal((await opened.commit({ events })).ok, true);
      const body = await stats(`since=${iso(T + base)}&until=${iso(T + base + MINUTE)}`);
      assert.equal(body.types.length, 20);
      assert.deepEqual(body.types[0], { type: 't00', total: 25 });
      assert.deepEqual(body.types[19], { type: 't19', total: 6 });
      assert.deepEqual(body.other, { types: 5, total: 15 });
      assert.equal(body.total, 325);
      assert.equal(body.minutes.length, 1);
      assert.equal(body.minutes[0].other, 15);
      assert.deepEqual(
        body.minutes[0].counts,
        Array.from({ length: 20 }, (_, i) => 25 - i),
      );
    });

    test('by default the last 30 minutes, up to now: events sent now are counted', async () => {
      expectStatus(
        await service.post('/track', payload({ events: [{ type: 'now-1' }, { type: 'now-1' }] })),
        200,
      );
      const before = Date.now();
      const body = await stats('type=now-1');
      const since = Date.parse(body.since);
      const until = Date.parse(body.until);
      assert.ok(until >= before - 1000 && until <= Date.now(), body.until);
      assert.equal(since % MINUTE, 0);
      assert.ok(until - since >= 30 * MINUTE && until - since < 31 * MINUTE);
      assert.equal(body.total, 2);
    });

    test('the window must be non-empty and at most 24 hours long: 422 naming the field', async () => {
      const at = iso(T);
      expectFieldError(await service.get(`/events/stats?since=${at}&until=${at}`), ['querystring', 'since']);
      expectFieldError(await service.get(`/events/stats?since=${iso(T + MINUTE)}&until=${at}`), [
        'querystring',
        'since',
      ]);
      expectFieldError(await service.get(`/events/stats?since=${iso(T - 24 * 3_600_000 - 1)}&until=${at}`), [
        'querystring',
        'since',
      ]);
      expectStatus(await service.get(`/events/stats?since=${iso(T - 24 * 3_600_000)}&until=${at}`), 200);
      expectFieldError(await service.get('/events/stats?since=yesterday'), ['querystring', 'since']);
      expectFieldError(await service.get('/events/stats?until=2026-02-30T00:00:00Z'), [
        'querystring',
        'until',
      ]);
      const detail = expectError(await service.get(`/events/stats?since=${at}&until=${at}`), 422);
      assert.deepEqual(detail, [
        { loc: ['querystring', 'since'], msg: 'must be before `until`', type: 'value_error' },
      ]);
    });

    test('needs the token', async () => {
      expectError(await service.app.inject({ method: 'GET', url: '/events/stats' }), 401);
    });
  });
}
