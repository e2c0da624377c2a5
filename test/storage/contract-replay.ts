/**
 * Storage contract, continued: the quarantine's side of replays (docs/api.md#replay). A write set
 * that replays a quarantined record deletes it in its own commit and writes nothing when it is gone,
 * so that concurrent replays store their events once; a record refused again is updated, never put
 * back. Called by `storeContract` (contract.ts) for every adapter.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { CommitResult } from '../../src/model/records.js';
import { newProfile } from '../../src/model/profiles.js';
import type { Store } from '../../src/storage/store.js';
import { at, event, rejected, session } from './contract.js';

type Opened = (t: TestContext) => Promise<{ store: Store }>;

const committed = (results: CommitResult[]) => results.filter((r) => r.ok).length;
const gone = (results: CommitResult[]) => results.filter((r) => !r.ok && r.conflict === 'rejected').length;

export function replayContract(open: Opened): void {
  test('replay: the commit deletes the replayed record with the events, once', async (t) => {
    const { store } = await open(t);
    await store.putRejected(rejected('r1', at(0)));
    const result = await store.commit({
      session: { record: session('s1', 'p1'), expectVersion: null },
      profile: { op: 'create', record: newProfile('p1', at(0)) },
      events: [event('e1', { session: { id: 's1' }, profile: { id: 'p1' } })],
      replayOf: 'r1',
    });
    assert.equal(result.ok, true, JSON.stringify(result));
    assert.equal(await store.getRejected('r1'), null);
    assert.equal((await store.getEvent('e1'))?.id, 'e1');

    const again = await store.commit({
      session: { record: session('s2', 'p2'), expectVersion: null },
      profile: { op: 'create', record: newProfile('p2', at(0)) },
      events: [event('e2', { session: { id: 's2' }, profile: { id: 'p2' } })],
      replayOf: 'r1',
    });
    assert.deepEqual(again, { ok: false, conflict: 'rejected' });
    assert.equal(await store.getEvent('e2'), null, 'nothing of a write set whose record is gone');
    assert.equal(await store.getSession('s2'), null);
    assert.equal(await store.getProfile('p2'), null);
  });

  test('replay: of write sets replaying one record at once, exactly one commits', async (t) => {
    const { store } = await open(t);
    await store.putRejected(rejected('r1', at(0)));
    await store.putRejected(rejected('r2', at(0)));
    // Several in one batch, and claim-only write sets (a replay that stores nothing) among them.
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        store.commit({ events: i % 4 === 3 ? [] : [event(`e${i}`)], replayOf: i % 2 ? 'r1' : 'r2' }),
      ),
    );
    assert.equal(committed(results), 2);
    assert.equal(gone(results), 6);
    assert.equal(await store.getRejected('r1'), null);
    assert.equal(await store.getRejected('r2'), null);
    const stored = (await store.listEvents({}, 50, null)).length;
    const winners = results.flatMap((r, i) => (r.ok && i % 4 !== 3 ? [i] : []));
    assert.equal(stored, winners.length, 'only the winners stored their events');
  });

  test('replay: a write set that conflicts on its session keeps the record', async (t) => {
    const { store } = await open(t);
    await store.putRejected(rejected('r1', at(0)));
    assert.equal(
      (await store.commit({ session: { record: session('s1', null), expectVersion: null }, events: [] })).ok,
      true,
    );
    const conflict = await store.commit({
      session: { record: session('s1', null), expectVersion: null },
      events: [event('e1', { session: { id: 's1' } })],
      replayOf: 'r1',
    });
    assert.deepEqual(conflict, { ok: false, conflict: 'session' });
    assert.equal((await store.getRejected('r1'))?.id, 'r1', 'kept for the next attempt');
    assert.equal(await store.getEvent('e1'), null);
  });

  test('replay: updateRejected replaces a stored record and never puts back a gone one', async (t) => {
    const { store } = await open(t);
    const first = rejected('r1', at(1000));
    await store.putRejected(first);
    const updated = { ...first, detail: 'validation failed with error: x', errors: [] };
    assert.equal(await store.updateRejected(updated), true);
    assert.deepEqual(await store.getRejected('r1'), updated);
    assert.equal(await store.deleteRejected('r1'), true);
    assert.equal(await store.updateRejected(updated), false);
    assert.equal(await store.getRejected('r1'), null);
  });
}
