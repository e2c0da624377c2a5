/**
 * The storage contract of destinations and delivery (src/storage/store.ts: DestinationStore): rules
 * every adapter must pass unchanged; run by `storeContract` (contract.ts) for each store.
 */
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import type { DestinationRecord, EventSelector, InFlightBatch } from '../../src/model/destinations.js';
import type { CommitResult, EventRecord } from '../../src/model/records.js';
import { newProfile } from '../../src/model/profiles.js';
import type { Store } from '../../src/storage/store.js';
import { at, event, withContexts } from './contract.js';
import type { StoreFactory } from './contract.js';

const ALL: EventSelector = { eventTypes: [], sourceIds: [] };

function destination(id: string, overrides: Partial<DestinationRecord> = {}): DestinationRecord {
  return {
    id,
    name: id,
    url: 'http://127.0.0.1:9/hook',
    enabled: true,
    event_types: [],
    source_ids: [],
    batch_size: 100,
    headers: {},
    secret: 'whsec_' + Buffer.alloc(32, 1).toString('base64'),
    ...overrides,
  };
}

function ok(result: CommitResult): void {
  assert.equal(result.ok, true, JSON.stringify(result));
}

async function commit(store: Store, ...events: EventRecord[]): Promise<string[]> {
  ok(await store.commit({ events }));
  return events.map((e) => e.id);
}

function batch(id: string, ids: string[], end: string): InFlightBatch {
  return { id, ids, end, first_attempt: at(0), attempts: 0, next_attempt: null };
}

/** Everything readable from `from`, `limit` at a time: ids in order, and the last position. */
async function readAll(store: Store, from: string, limit = 1000, selector = ALL) {
  const ids: string[] = [];
  let next = from;
  for (let i = 0; i < 1000; i++) {
    const slice = await store.destinations.read(selector, next, limit);
    ids.push(...slice.ids);
    assert.ok(slice.next >= next, 'positions only move forward');
    if (slice.ids.length === 0) return { ids, next: slice.next };
    assert.ok(slice.ids.length <= limit);
    assert.equal(JSON.parse(`[${slice.json}]`).length, slice.ids.length);
    next = slice.next;
  }
  throw new Error('no end');
}

export function destinationContract(name: string, factory: StoreFactory): void {
  async function open(t: TestContext) {
    const handle = await factory({ writeQueueLimit: 10_000 });
    await handle.store.open();
    t.after(() => handle.store.close());
    return handle;
  }

  async function cursorOf(store: Store, id: string): Promise<string> {
    return (await store.destinations.state(id))!.cursor;
  }

  describe(`${name}: destination contract`, () => {
    test('records: put creates then replaces, get, list by id, delete with the state', async (t) => {
      const { store } = await open(t);
      assert.equal(await store.destinations.put(destination('b')), true);
      assert.equal(await store.destinations.put(destination('a')), true);
      assert.equal(await store.destinations.put(destination('b', { name: 'B2' })), false);
      assert.deepEqual(await store.destinations.get('b'), destination('b', { name: 'B2' }));
      assert.deepEqual(
        (await store.destinations.list()).map((d) => d.id),
        ['a', 'b'],
      );
      assert.equal(await store.destinations.get('zz'), null);
      assert.equal(await store.destinations.state('zz'), null);
      assert.equal(await store.destinations.delete('a'), true);
      assert.equal(await store.destinations.delete('a'), false);
      assert.equal(await store.destinations.state('a'), null);
    });

    test('events whose request context is kept once are read merged with it, whole runs or a part', async (t) => {
      const { store } = await open(t);
      await store.destinations.put(destination('d'));
      const cursor = await cursorOf(store, 'd');
      const write = withContexts(
        ['r1', 'r2', 'r3', 'r4'].map((id) => event(id)),
        { blob: 'b'.repeat(10_000), page: { title: 'T' } },
        { r3: { page: { title: 'own' } } },
      );
      ok(await store.commit(write));
      for (const limit of [1, 3, 100]) {
        const read: EventRecord[] = [];
        let next = cursor;
        for (let i = 0; i < 10; i++) {
          const slice = await store.destinations.read(ALL, next, limit);
          if (slice.ids.length === 0) break;
          read.push(...(JSON.parse(`[${slice.json}]`) as EventRecord[]));
          next = slice.next;
        }
        assert.deepEqual(
          read.map((e) => e.context),
          write.events.map((e) => e.context),
          `limit ${limit}`,
        );
      }
    });

    test('a new destination reads only events committed after it, in commit order, a limit at a time', async (t) => {
      const { store } = await open(t);
      await commit(store, event('old1'), event('old2'));
      await store.destinations.put(destination('d'));
      const cursor = await cursorOf(store, 'd');
      const sent: string[] = [];
      // One write set of five events (split across reads), then single ones.
      sent.push(...(await commit(store, ...['m1', 'm2', 'm3', 'm4', 'm5'].map((id) => event(id)))));
      for (let i = 0; i < 4; i++) sent.push(...(await commit(store, event(`z${9 - i}`))));
      for (const limit of [1, 2, 3, 100]) {
        assert.deepEqual((await readAll(store, cursor, limit)).ids, sent, `limit ${limit}`);
      }
      const first = await store.destinations.read(ALL, cursor, 2);
      const event0 = JSON.parse(`[${first.json}]`)[0] as EventRecord;
      assert.deepEqual(event0, await store.getEvent('m1'));
      assert.deepEqual(first.times, [at(0), at(0)]);
      assert.equal(await store.destinations.count(ALL, cursor), 9);
      assert.equal(await store.destinations.count(ALL, first.next), 7);
      const end = (await readAll(store, cursor)).next;
      assert.equal(await store.destinations.count(ALL, end), 0);
      await commit(store, event('later'));
      assert.deepEqual((await readAll(store, end)).ids, ['later']);
    });

    test('a read stops at 4 MiB of events (one event at least), wherever runs begin', async (t) => {
      const { store } = await open(t);
      await store.destinations.put(destination('d'));
      const cursor = await cursorOf(store, 'd');
      const big = (id: string) => event(id, { properties: { blob: 'x'.repeat(600_000) } });
      const sent: string[] = [];
      sent.push(...(await commit(store, ...['a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7', 'a8'].map(big))));
      for (let i = 0; i < 6; i++) sent.push(...(await commit(store, big(`b${i}`))));
      const ids: string[] = [];
      let next = cursor;
      for (let reads = 0; reads < 20; reads++) {
        const slice = await store.destinations.read(ALL, next, 100);
        if (slice.ids.length === 0) break;
        assert.ok(
          slice.json.length <= 4 * 1024 * 1024 + 700_000,
          `a read of ${slice.json.length} characters`,
        );
        assert.ok(slice.ids.length < sent.length, 'the budget cut the read');
        ids.push(...slice.ids);
        next = slice.next;
      }
      assert.deepEqual(ids, sent);
    });

    test('selectors: event types and sources, within write sets of mixed types', async (t) => {
      const { store } = await open(t);
      await store.destinations.put(destination('d'));
      const cursor = await cursorOf(store, 'd');
      const typed = (id: string, type: string, source = 'src-1') =>
        event(id, { type, source: { id: source } });
      await commit(store, typed('a1', 'buy'), typed('a2', 'view'), typed('a3', 'buy'));
      await commit(store, typed('b1', 'view'));
      await commit(store, typed('c1', 'buy', 'other'), typed('c2', 'refund', 'other'));
      const buys = { eventTypes: ['buy', 'refund'], sourceIds: [] };
      const other = { eventTypes: [], sourceIds: ['other'] };
      const both = { eventTypes: ['refund'], sourceIds: ['other'] };
      for (const limit of [1, 2, 100]) {
        assert.deepEqual((await readAll(store, cursor, limit, buys)).ids, ['a1', 'a3', 'c1', 'c2']);
        assert.deepEqual((await readAll(store, cursor, limit, other)).ids, ['c1', 'c2']);
        assert.deepEqual((await readAll(store, cursor, limit, both)).ids, ['c2']);
      }
      assert.equal(await store.destinations.count(buys, cursor), 4);
      assert.equal(await store.destinations.count(other, cursor), 2);
      assert.equal(await store.destinations.count(both, cursor), 1);
      const afterFirst = (await store.destinations.read(buys, cursor, 1)).next;
      assert.equal(await store.destinations.count(buys, afterFirst), 3);
    });

    test('leases: one owner at a time; renewed by its owner; released or expired, another takes it', async (t) => {
      const { store } = await open(t);
      await store.destinations.put(destination('d'));
      const leased = await store.destinations.lease('d', 'A', 60_000);
      assert.equal(leased?.lease?.owner, 'A');
      assert.equal(await store.destinations.lease('d', 'B', 60_000), null);
      assert.ok(await store.destinations.lease('d', 'A', 60_000), 'the owner renews');
      await store.destinations.release('A');
      assert.equal((await store.destinations.lease('d', 'B', 1))?.lease?.owner, 'B');
      await new Promise((resolve) => setTimeout(resolve, 30));
      assert.equal((await store.destinations.lease('d', 'A', 60_000))?.lease?.owner, 'A', 'an expired lease');
      assert.equal(await store.destinations.lease('missing', 'A', 60_000), null);
      // Many owners at once: exactly one gets it.
      await store.destinations.put(destination('e'));
      const owners = Array.from({ length: 10 }, (_, i) => `o${i}`);
      const results = await Promise.all(owners.map((o) => store.destinations.lease('e', o, 60_000)));
      assert.equal(results.filter((r) => r !== null).length, 1);
    });

    test('batches: begin needs the lease and no batch; settling moves the cursor, counts, fails', async (t) => {
      const { store } = await open(t);
      await store.destinations.put(destination('d'));
      await store.destinations.lease('d', 'A', 60_000);
      const cursor = await cursorOf(store, 'd');
      await commit(store, event('e1'), event('e2'));
      await commit(store, event('e3'));
      const first = await store.destinations.read(ALL, cursor, 2);
      assert.equal(await store.destinations.begin('d', 'B', batch('m1', first.ids, first.next)), false);
      assert.equal(await store.destinations.begin('d', 'A', batch('m1', first.ids, first.next)), true);
      assert.equal(await store.destinations.begin('d', 'A', batch('m2', first.ids, first.next)), false);
      assert.equal(
        await store.destinations.advance('d', 'A', first.next),
        false,
        'not with a batch in flight',
      );
      const retry = { outcome: 'retry', at: at(1), error: 'HTTP 500', next_attempt: at(2000) } as const;
      assert.equal(await store.destinations.settle('d', 'B', 'm1', retry), false, 'not the owner');
      assert.equal(await store.destinations.settle('d', 'A', 'other', retry), false, 'not the batch');
      assert.equal(await store.destinations.settle('d', 'A', 'm1', retry), true);
      let state = (await store.destinations.state('d'))!;
      assert.deepEqual(state.batch, {
        ...batch('m1', ['e1', 'e2'], first.next),
        attempts: 1,
        next_attempt: at(2000),
      });
      assert.equal(state.cursor, cursor);
      assert.equal(state.failing_since, at(1));
      assert.equal(state.last_error, 'HTTP 500');
      assert.equal(await store.destinations.count(ALL, state.cursor), 3);
      assert.equal(
        await store.destinations.settle('d', 'A', 'm1', { outcome: 'delivered', at: at(3) }),
        true,
      );
      state = (await store.destinations.state('d'))!;
      assert.equal(state.batch, null);
      assert.equal(state.cursor, first.next);
      assert.equal(state.delivered, 2);
      assert.equal(state.failing_since, null);
      assert.equal(state.last_error, 'HTTP 500', 'the last error is kept');
      assert.equal(
        await store.destinations.settle('d', 'A', 'm1', { outcome: 'delivered', at: at(3) }),
        false,
      );

      const second = await store.destinations.read(ALL, state.cursor, 10);
      assert.deepEqual(second.ids, ['e3']);
      await store.destinations.begin('d', 'A', batch('m3', second.ids, second.next));
      await store.destinations.settle('d', 'A', 'm3', { outcome: 'failed', at: at(5), error: 'HTTP 400' });
      state = (await store.destinations.state('d'))!;
      assert.equal(state.cursor, second.next);
      assert.equal(state.failed, 1);
      assert.equal(state.delivered, 2);
      assert.equal(await store.destinations.count(ALL, state.cursor), 0);
      assert.deepEqual(await store.destinations.getFailed('d', 'm3'), {
        batch_id: 'm3',
        failed_at: at(5),
        first_attempt: at(0),
        attempts: 1,
        error: 'HTTP 400',
        events: 1,
        ids: ['e3'],
      });
      assert.equal(await store.destinations.resolveFailed('d', 'm3', { error: 'HTTP 503' }), true);
      assert.equal((await store.destinations.getFailed('d', 'm3'))?.attempts, 2);
      assert.equal((await store.destinations.getFailed('d', 'm3'))?.error, 'HTTP 503');
      assert.equal(await store.destinations.resolveFailed('d', 'm3', { delivered: true }), true);
      assert.equal(await store.destinations.getFailed('d', 'm3'), null);
      state = (await store.destinations.state('d'))!;
      assert.equal(state.failed, 0);
      assert.equal(state.delivered, 3);
      assert.equal(await store.destinations.resolveFailed('d', 'm3', { delivered: true }), false);
    });

    test('advance moves the cursor forward only; the failed list pages newest first; delete clears it', async (t) => {
      const { store } = await open(t);
      await store.destinations.put(destination('d'));
      await store.destinations.lease('d', 'A', 60_000);
      const cursor = await cursorOf(store, 'd');
      await commit(store, event('x1'));
      const read = await store.destinations.read(ALL, cursor, 10);
      assert.equal(await store.destinations.advance('d', 'B', read.next), false, 'not the owner');
      assert.equal(await store.destinations.advance('d', 'A', read.next), true);
      assert.equal(await store.destinations.advance('d', 'A', cursor), false, 'never back');
      assert.equal(await cursorOf(store, 'd'), read.next);
      for (let i = 0; i < 5; i++) {
        await commit(store, event(`f${i}`));
        const slice = await store.destinations.read(ALL, await cursorOf(store, 'd'), 1);
        await store.destinations.begin('d', 'A', batch(`b${i}`, slice.ids, slice.next));
        await store.destinations.settle('d', 'A', `b${i}`, { outcome: 'failed', at: at(i % 2), error: 'x' });
      }
      const page1 = await store.destinations.listFailed('d', 3, null);
      assert.deepEqual(
        page1.map((f) => f.batch_id),
        ['b3', 'b1', 'b4'],
      );
      const last = page1[2]!;
      const page2 = await store.destinations.listFailed('d', 3, {
        insert: last.failed_at,
        id: last.batch_id,
      });
      assert.deepEqual(
        page2.map((f) => f.batch_id),
        ['b2', 'b0'],
      );
      await store.destinations.delete('d');
      await store.destinations.put(destination('d'));
      assert.deepEqual(await store.destinations.listFailed('d', 10, null), []);
      assert.equal((await store.destinations.state('d'))?.failed, 0);
    });

    test('readIds: the events in the order given; erased ones are left out', async (t) => {
      const { store } = await open(t);
      ok(await store.commit({ profile: { op: 'create', record: newProfile('p', at(0)) }, events: [] }));
      await commit(store, event('k1'), event('k2', { profile: { id: 'p' } }), event('k3'));
      await commit(store, event('k4'));
      const slice = await store.destinations.readIds(['k4', 'k1', 'k2', 'nope', 'k3']);
      assert.deepEqual(slice.ids, ['k4', 'k1', 'k2', 'k3']);
      assert.deepEqual(
        JSON.parse(`[${slice.json}]`).map((e: EventRecord) => e.id),
        slice.ids,
      );
      await store.eraseProfile('p');
      assert.deepEqual((await store.destinations.readIds(['k1', 'k2', 'k3'])).ids, ['k1', 'k3']);
    });

    test('after the newest events are erased and the store reopened, later events still lie after the cursor', async (t) => {
      const { store, again } = await open(t);
      await store.destinations.put(destination('d'));
      await store.destinations.lease('d', 'A', 60_000);
      ok(await store.commit({ profile: { op: 'create', record: newProfile('p', at(0)) }, events: [] }));
      const cursor = await cursorOf(store, 'd');
      await commit(store, event('keep'));
      await commit(store, event('gone1', { profile: { id: 'p' } }), event('gone2', { profile: { id: 'p' } }));
      const read = await readAll(store, cursor);
      assert.deepEqual(read.ids, ['keep', 'gone1', 'gone2']);
      await store.destinations.advance('d', 'A', read.next);
      await store.eraseProfile('p');
      await store.close();
      const reopened = again();
      await reopened.open();
      t.after(() => reopened.close());
      await commit(reopened, event('new1'));
      const after = await readAll(reopened, (await reopened.destinations.state('d'))!.cursor);
      assert.deepEqual(after.ids, ['new1']);
    });
  });
}
