/**
 * Storage contract, continued: client ids (duplicates) and event times (docs/api.md#duplicates,
 * #event-time, #listing-events). Called by `storeContract` (contract.ts) for every adapter.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { CommitResult, EventRecord, TimeSource } from '../../src/model/records.js';
import { newProfile } from '../../src/model/profiles.js';
import type { Store } from '../../src/storage/store.js';
import { at, event, session } from './contract.js';

type Opened = (t: TestContext) => Promise<{ store: Store }>;

/** An event with a client id (and other fields of `event`). */
export function keyed(
  id: string,
  clientId: string | null,
  overrides: Partial<EventRecord> = {},
  insert = at(0),
) {
  const e = event(id, overrides, insert);
  e.metadata.client_id = clientId;
  return e;
}

/** An event inserted at `insertMs` that happened at `createMs` (both relative to `at`). */
function timed(id: string, insertMs: number, createMs: number, overrides: Partial<EventRecord> = {}) {
  const e = event(id, overrides, at(insertMs));
  const source: TimeSource = createMs === insertMs ? 'server' : 'device';
  e.metadata.time = { insert: at(insertMs), create: at(createMs), source };
  return e;
}

function stored(result: CommitResult): string[] {
  assert.equal(result.ok, true, JSON.stringify(result));
  return result.ok ? result.duplicates : [];
}

const ids = async (promise: Promise<{ id: string }[]>) => (await promise).map((e) => e.id);

export function eventTrustContract(open: Opened): void {
  test('duplicates: a client id stored for a source is not stored again; other sources may use it', async (t) => {
    const { store } = await open(t);
    assert.deepEqual(stored(await store.commit({ events: [keyed('e1', 'c1')] })), []);
    const result = await store.commit({
      events: [keyed('e2', 'c1'), keyed('e3', 'c2'), keyed('e4', 'c1', { source: { id: 'src-2' } }, at(5))],
    });
    assert.deepEqual(stored(result), ['e2']);
    assert.equal(await store.getEvent('e2'), null, 'the duplicate is not stored');
    assert.equal((await store.getEvent('e1'))?.metadata.client_id, 'c1');
    assert.equal((await store.getEvent('e3'))?.metadata.client_id, 'c2');
    assert.deepEqual(await ids(store.listEvents({ clientId: 'c1' }, 50, null)), ['e4', 'e1']);
    assert.deepEqual(await ids(store.listEvents({ clientId: 'c1', sourceId: 'src-1' }, 50, null)), ['e1']);
    assert.deepEqual(await ids(store.listEvents({ clientId: 'c1', type: 'page-view' }, 50, null)), [
      'e4',
      'e1',
    ]);
    assert.deepEqual(await ids(store.listEvents({ clientId: 'c1', type: 'other' }, 50, null)), []);
    assert.deepEqual(
      await ids(store.listEvents({ clientId: 'C1' }, 50, null)),
      [],
      'client ids match exactly',
    );
    // Events without a client id are never duplicates of one another.
    assert.deepEqual(stored(await store.commit({ events: [keyed('n1', null), keyed('n2', null)] })), []);
    assert.equal((await store.getEvent('n2'))?.metadata.client_id, null);
  });

  test('duplicates: within one write set the first event of a client id is stored, later ones are not', async (t) => {
    const { store } = await open(t);
    const result = await store.commit({
      session: { record: session('s1', null), expectVersion: null },
      events: [
        keyed('a', 'same', { session: { id: 's1' } }),
        keyed('b', 'same', { session: { id: 's1' } }),
        keyed('x', null, { session: { id: 's1' } }),
        keyed('c', 'other', { session: { id: 's1' }, type: 'buy' }),
        keyed('d', 'same', { session: { id: 's1' } }),
      ],
    });
    assert.deepEqual(stored(result), ['b', 'd']);
    assert.deepEqual((await ids(store.listEvents({ sessionId: 's1' }, 50, null))).sort(), ['a', 'c', 'x']);
    assert.deepEqual(await ids(store.listEvents({ clientId: 'other', type: 'buy' }, 50, null)), ['c']);
    assert.equal((await store.getSession('s1'))?.version, 1, 'the rest of the write set is written');
  });

  test('duplicates: concurrent write sets with one client id store one event', async (t) => {
    const { store } = await open(t);
    const n = 40;
    const results = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        store.commit({
          session: { record: session(`s${i}`, null), expectVersion: null },
          events: [keyed(`e${i}`, 'once', { session: { id: `s${i}` } }), keyed(`f${i}`, `own-${i}`)],
        }),
      ),
    );
    const duplicates = results.flatMap(stored);
    assert.equal(duplicates.length, n - 1, 'all but one are duplicates');
    assert.ok(duplicates.every((id) => id.startsWith('e')));
    const kept = await ids(store.listEvents({ clientId: 'once' }, 50, null));
    assert.equal(kept.length, 1);
    assert.ok(!duplicates.includes(kept[0]!), 'the stored one is the one not reported');
    assert.equal((await store.listEvents({}, 1000, null)).length, n + 1);
    for (let i = 0; i < n; i++) assert.notEqual(await store.getSession(`s${i}`), null);
  });

  test('duplicates: a write set that conflicts stores no client id; erasing an event frees its id', async (t) => {
    const { store } = await open(t);
    await store.commit({
      session: { record: session('s', null), expectVersion: null },
      profile: {
        op: 'create',
        record: newProfile('p', at(0)),
      },
      events: [],
    });
    const conflict = await store.commit({
      session: { record: session('s', null), expectVersion: null },
      events: [keyed('lost', 'k', { session: { id: 's' } })],
    });
    assert.equal(conflict.ok, false);
    assert.deepEqual(
      stored(await store.commit({ events: [keyed('k1', 'k', { profile: { id: 'p' } })] })),
      [],
    );
    assert.deepEqual(stored(await store.commit({ events: [keyed('k2', 'k')] })), ['k2']);
    await store.eraseProfile('p');
    assert.equal(await store.getEvent('k1'), null);
    assert.deepEqual(stored(await store.commit({ events: [keyed('k3', 'k')] })), [], 'free again');
    assert.deepEqual(await ids(store.listEvents({ clientId: 'k' }, 50, null)), ['k3']);
  });

  test('event times: create and source round-trip; since/until select on create, in band and off band', async (t) => {
    const { store } = await open(t);
    const hour = 3_600_000;
    const events = [
      timed('a', 10_000, 10_000),
      timed('b', 10_000, 9_000, { type: 'buy' }),
      timed('c', 20_000, -hour, { session: { id: 's1' } }), // happened an hour before it arrived
      timed('d', 30_000, 29_000, { session: { id: 's1' } }),
      timed('e', 5 * hour, 15_000, { type: 'buy', session: { id: 's1' } }), // arrived five hours late
      timed('f', 6 * hour, 6 * hour - 1000),
    ];
    assert.deepEqual(stored(await store.commit({ events: events.slice(0, 3) })), []);
    for (const e of events.slice(3)) stored(await store.commit({ events: [e] }));
    for (const e of events) assert.deepEqual(await store.getEvent(e.id), e);

    const list = (filter: Parameters<Store['listEvents']>[0], limit = 50) =>
      ids(store.listEvents(filter, limit, null));
    assert.deepEqual(await list({ since: at(9_500), until: at(20_000) }), ['e', 'a']);
    assert.deepEqual(await list({ since: at(9_000) }), ['f', 'e', 'd', 'b', 'a'], 'since is included');
    assert.deepEqual(await list({ until: at(9_000) }), ['c'], 'until is excluded');
    assert.deepEqual(await list({ until: at(0) }), ['c']);
    assert.deepEqual(await list({ since: at(-2 * hour), until: at(-hour + 1) }), ['c']);
    assert.deepEqual(await list({ since: at(7 * hour) }), []);
    assert.deepEqual(await list({ since: at(0), type: 'buy' }), ['e', 'b']);
    assert.deepEqual(await list({ until: at(20_000), sessionId: 's1' }), ['e', 'c']);
    assert.deepEqual(await list({ since: at(10_000), sessionId: 's1', type: 'buy' }), ['e']);
    assert.deepEqual(await list({ since: at(-hour), sourceId: 'src-1', profileId: undefined }), [
      'f',
      'e',
      'd',
      'c',
      'b',
      'a',
    ]);

    // Paging with a range visits each match once, in the usual order.
    const seen: string[] = [];
    let after: { insert: string; id: string } | null = null;
    for (let page = 0; page < 10; page++) {
      const got: EventRecord[] = await store.listEvents(
        { since: at(-hour), until: at(6 * hour - 1000) },
        2,
        after,
      );
      seen.push(...got.map((e) => e.id));
      if (got.length < 2) break;
      const last = got[got.length - 1]!;
      after = { insert: last.metadata.time.insert, id: last.id };
    }
    assert.deepEqual(seen, ['e', 'd', 'c', 'b', 'a']);
  });
}
