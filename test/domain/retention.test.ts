/** TRACK_EVENT_RETENTION_DAYS: old events are deleted in the background, in small batches, on both stores. */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { describe, test, type TestContext } from 'node:test';
import { EventRetention } from '../../src/domain/retention.js';
import type { EventRecord } from '../../src/model/records.js';
import { createStore } from '../../src/storage/index.js';
import { defaultConfig } from '../../src/config.js';
import type { Store } from '../../src/storage/store.js';
import { allEvents, AUTH, startService, tempDir } from '../helpers.js';
import { testSchema, usePostgres } from '../support/postgres.js';
import { event } from '../storage/contract.js';

usePostgres();

const DAY = 86_400_000;
const NOW = Date.parse('2026-11-23T12:00:00.000Z');
const ago = (days: number, ms = 0) => new Date(NOW - days * DAY + ms).toISOString();

/** Requests of 1 to 4 events, `count` of them, inserted `days` days ago (a millisecond apart). */
async function seed(store: Store, prefix: string, days: number, count: number): Promise<string[]> {
  const ids: string[] = [];
  const commits: Promise<unknown>[] = [];
  for (let r = 0; r < count; r++) {
    const events: EventRecord[] = Array.from({ length: (r % 4) + 1 }, (_, k) =>
      event(`${prefix}-${r}-${k}`, { session: { id: `${prefix}-s${r % 7}` } }, ago(days, r)),
    );
    ids.push(...events.map((e) => e.id));
    commits.push(store.commit({ events }));
  }
  await Promise.all(commits);
  return ids;
}

const STORES: [string, () => Promise<{ config: ReturnType<typeof defaultConfig>; cleanup: () => void }>][] = [
  [
    'sqlite',
    async () => {
      const dataDir = tempDir();
      return {
        config: defaultConfig({ dataDir }),
        cleanup: () => rmSync(dataDir, { recursive: true, force: true }),
      };
    },
  ],
  [
    'postgres',
    async () => ({ config: defaultConfig({ databaseUrl: await testSchema() }), cleanup: () => undefined }),
  ],
];

for (const [name, make] of STORES) {
  /** A fresh store of this kind, open, closed and removed when the test ends. */
  const opened = async (t: TestContext): Promise<Store> => {
    const { config, cleanup } = await make();
    t.after(cleanup);
    const store = createStore(config);
    await store.open();
    t.after(() => store.close());
    return store;
  };

  describe(`${name}: event retention`, () => {
    test('a pass deletes every event older than the bound, in batches of about the batch size', async (t) => {
      const store = await opened(t);
      const old = await seed(store, 'old', 31, 300);
      const kept = [...(await seed(store, 'recent', 29, 100)), ...(await seed(store, 'new', 0, 20))];

      const batches: number[] = [];
      const retention = new EventRetention(
        store,
        { days: 30, batchEvents: 50, pauseMs: 1 },
        () => new Date(NOW),
        {
          deleted: (count) => batches.push(count),
        },
      );
      assert.equal(await retention.pass(), old.length);
      assert.equal(
        batches.reduce((a, b) => a + b, 0),
        old.length,
      );
      assert.ok(batches.length >= old.length / 53, `${batches.length} batches`);
      assert.ok(Math.max(...batches) <= 50 + 3, `batches of about 50: ${batches.join(',')}`);
      const left = (await store.listEvents({}, 1000, null)).map((e) => e.id).sort();
      assert.deepEqual(left, kept.sort());
      assert.equal(await retention.pass(), 0, 'nothing left to delete');
    });

    test("deleting a session's events leaves the time of its latest request", async (t) => {
      const store = await opened(t);
      const [first, latest] = [ago(40), ago(35)];
      const sessionEvent = (id: string, at: string) => event(id, { session: { id: 'kept-session' } }, at);
      const record = {
        id: 'kept-session',
        profile: null,
        metadata: { time: { insert: first, update: first } },
        context: {},
        properties: {},
      };
      await store.commit({ session: { record, expectVersion: null }, events: [sessionEvent('e1', first)] });
      // A request that changes nothing of the session: only its events and its time are stored.
      await store.commit({ touch: { id: 'kept-session', at: latest }, events: [sessionEvent('e2', latest)] });
      assert.equal((await store.getSession('kept-session'))?.record.metadata.time.update, latest);

      const retention = new EventRetention(
        store,
        { days: 30, batchEvents: 1, pauseMs: 1 },
        () => new Date(NOW),
      );
      assert.equal(await retention.pass(), 2);
      assert.deepEqual(await store.listEvents({ sessionId: 'kept-session' }, 10, null), []);
      const session = await store.getSession('kept-session');
      assert.equal(session?.record.metadata.time.update, latest);
      assert.equal(session?.record.metadata.time.insert, first);
    });

    test('stop ends a pass between two batches', async (t) => {
      const store = await opened(t);
      await seed(store, 'old', 40, 200);
      let batches = 0;
      const retention: EventRetention = new EventRetention(
        store,
        { days: 30, batchEvents: 10, pauseMs: 1 },
        () => new Date(NOW),
        {
          deleted: () => {
            if (++batches === 3) void retention.stop();
          },
        },
      );
      const deleted = await retention.pass();
      assert.equal(batches, 3);
      assert.ok(deleted > 0 && deleted < 100, `${deleted} deleted`);
    });
  });
}

test('the service deletes old events in the background with TRACK_EVENT_RETENTION_DAYS, and counts them', async (t) => {
  const dataDir = tempDir();
  // Events of 10 and 2 days ago, written before the service starts.
  const store = createStore(defaultConfig({ dataDir }));
  await store.open();
  const now = Date.now();
  const at = (days: number, ms: number) => new Date(now - days * DAY + ms).toISOString();
  const write = (prefix: string, days: number) =>
    Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        store.commit({ events: [event(`${prefix}-${i}`, {}, at(days, i))] }),
      ),
    );
  await write('old', 10);
  await write('recent', 2);
  await store.close();

  const service = await startService({ dataDir, eventRetentionDays: 7 });
  t.after(() => service.close());
  const deadline = Date.now() + 60_000;
  let ids: string[] = [];
  while (Date.now() < deadline) {
    ids = (await allEvents(service)).map((e) => e.id as string);
    if (!ids.some((id) => id.startsWith('old-'))) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  assert.deepEqual(ids.sort(), Array.from({ length: 50 }, (_, i) => `recent-${i}`).sort());
  const metrics = await service.app.inject({ method: 'GET', url: '/metrics', headers: AUTH });
  assert.match(metrics.body, /^collector_events_expired_total 50$/m);
});
