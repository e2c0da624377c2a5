import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import pg from 'pg';
import type { CommitResult, EventRecord, WriteSet } from '../../src/model/records.js';
import { newProfile } from '../../src/model/profiles.js';
import { testSchema, usePostgres, openedStore } from '../support/postgres.js';
import { at, event, session, withContexts } from './contract.js';

usePostgres();

/**
 * Write sets committed together share one statement per kind of write (docs/architecture.md#the-write-path):
 * each one's conflicts and duplicates are its own, and a conflict writes nothing of it.
 */

function keyed(id: string, clientId: string, overrides: Partial<EventRecord> = {}): EventRecord {
  const e = event(id, overrides);
  e.metadata.client_id = clientId;
  return e;
}

function ok(result: CommitResult | undefined): asserts result is Extract<CommitResult, { ok: true }> {
  assert.equal(result?.ok, true, JSON.stringify(result));
}

test('one batch of many shapes: each write set committed or in conflict alone', async (t) => {
  const url = await testSchema();
  const store = await openedStore(t, url);
  const blob = { page: { url: 'https://example.com/' }, blob: 'b'.repeat(5_000) };
  // Stored before: a profile, sessions at version 1, an event with a client id.
  for (const id of ['known', 'known2']) {
    ok(await store.commit({ profile: { op: 'create', record: newProfile(id, at(0)) }, events: [] }));
  }
  for (const id of ['old', 'old2', 'old3', 'old4']) {
    ok(await store.commit({ session: { record: session(id, 'known'), expectVersion: null }, events: [] }));
  }
  ok(await store.commit({ events: [keyed('stored', 'key-stored')] }));

  const shapes: [string, WriteSet][] = [
    [
      'first visit',
      {
        session: { record: session('new1', 'p1'), expectVersion: null },
        profile: { op: 'create', record: newProfile('p1', at(1)) },
        events: [event('e1', { session: { id: 'new1' }, profile: { id: 'p1' } })],
      },
    ],
    [
      'first visit of a stored session',
      {
        session: { record: session('old', 'p2'), expectVersion: null },
        profile: { op: 'create', record: newProfile('p2', at(1)) },
        events: [event('e2', { session: { id: 'old' }, profile: { id: 'p2' } })],
      },
    ],
    [
      'returning visitor',
      {
        touch: { id: 'old', at: at(5) },
        profile: { op: 'keep', id: 'known' },
        events: [
          keyed('k1', 'key-stored', { profile: { id: 'known' } }),
          keyed('k2', 'key-fresh', { profile: { id: 'known' } }),
        ],
      },
    ],
    [
      'profile gone',
      { profile: { op: 'keep', id: 'gone' }, events: [event('e4', { profile: { id: 'gone' } })] },
    ],
    [
      'session at its version',
      { session: { record: session('old2', 'known', at(2)), expectVersion: 1 }, events: [event('e5')] },
    ],
    [
      'session at another version',
      { session: { record: session('old3', 'known', at(2)), expectVersion: 5 }, events: [event('e6')] },
    ],
    [
      'new session of a known profile',
      {
        session: { record: session('new9', 'known2'), expectVersion: null },
        profile: { op: 'visit', id: 'known2', at: at(9) },
        events: [event('e9', { session: { id: 'new9' }, profile: { id: 'known2' } })],
      },
    ],
    ['later client id of the batch', { events: [keyed('k3', 'key-fresh'), event('e7')] }],
    [
      'context kept once',
      {
        ...withContexts([event('c1'), event('c2'), event('c3')], blob),
        session: { record: session('new8', null), expectVersion: null },
      },
    ],
    [
      'context kept once, session conflict',
      {
        ...withContexts([event('d1'), event('d2')], blob),
        session: { record: session('old4', null), expectVersion: null },
      },
    ],
    [
      'context kept once, every event a duplicate',
      withContexts([keyed('x1', 'key-stored'), keyed('x2', 'key-stored')], blob),
    ],
  ];
  // Submitted in one turn of the event loop: one batch.
  const results = await Promise.all(shapes.map(([, ws]) => store.commit(ws)));
  const outcome = (name: string) => results[shapes.findIndex(([n]) => n === name)]!;
  const conflict = (name: string) => {
    const r = outcome(name);
    return r.ok ? null : r.conflict;
  };

  ok(outcome('first visit'));
  assert.equal(conflict('first visit of a stored session'), 'session');
  const returning = outcome('returning visitor');
  ok(returning);
  assert.deepEqual(returning.duplicates, ['k1']);
  assert.equal(conflict('profile gone'), 'profile');
  ok(outcome('session at its version'));
  const visit = outcome('new session of a known profile');
  ok(visit);
  assert.equal(visit.profile?.stats.visits, 2);
  assert.equal((await store.getProfile('known2'))?.stats.visits, 2);
  assert.equal(conflict('session at another version'), 'session');
  const later = outcome('later client id of the batch');
  ok(later);
  assert.deepEqual(later.duplicates, ['k3']);
  ok(outcome('context kept once'));
  assert.equal(conflict('context kept once, session conflict'), 'session');
  const allDuplicates = outcome('context kept once, every event a duplicate');
  ok(allDuplicates);
  assert.deepEqual(allDuplicates.duplicates, ['x1', 'x2']);

  const stored = (await store.listEvents({}, 100, null)).map((e) => e.id).sort();
  assert.deepEqual(stored, ['c1', 'c2', 'c3', 'e1', 'e5', 'e7', 'e9', 'k2', 'stored']);
  assert.ok(await store.getProfile('p1'));
  assert.equal(await store.getProfile('p2'), null);
  assert.equal((await store.getSession('old'))?.record.profile?.id, 'known');
  assert.equal((await store.getSession('old2'))?.version, 2);
  assert.equal((await store.getSession('old3'))?.version, 1);
  assert.equal((await store.getSession('old4'))?.version, 1);
  assert.equal((await store.getSession('new8'))?.version, 1);
  for (const id of ['c1', 'c2', 'c3']) assert.deepEqual((await store.getEvent(id))?.context, blob, id);

  const client = new pg.Client(url);
  await client.connect();
  t.after(() => client.end());
  const { rows } = await client.query<{ id: string }>('SELECT id FROM event_contexts');
  assert.deepEqual(
    rows.map((r) => r.id),
    ['c1'],
  );
});

test('a batch of first visits alone is written by its one statement: each committed or in conflict alone, and one the server refuses fails alone', async (t) => {
  const url = await testSchema();
  const store = await openedStore(t, url);
  ok(await store.commit({ session: { record: session('old', null), expectVersion: null }, events: [] }));
  const visit = (sessionId: string, profileId: string, eventId: string): WriteSet => ({
    session: { record: session(sessionId, profileId), expectVersion: null },
    profile: { op: 'create', record: newProfile(profileId, at(1)) },
    events: [event(eventId, { session: { id: sessionId }, profile: { id: profileId } })],
  });

  // Submitted in one turn of the event loop: one batch, which needs no lock, touch or identity.
  const first = await Promise.all(
    [
      visit('s1', 'p1', 'e1'),
      visit('s2', 'p2', 'e2'),
      visit('old', 'p3', 'e3'),
      { events: [keyed('k1', 'key-1')] },
    ].map((ws) => store.commit(ws)),
  );
  ok(first[0]);
  ok(first[1]);
  assert.deepEqual(first[2], { ok: false, conflict: 'session' });
  ok(first[3]);
  assert.equal(await store.getProfile('p3'), null);

  // A write set whose statement the server refuses (a time that is no time): it alone fails.
  const refused = visit('s5', 'p5', 'e5');
  refused.events[0]!.metadata.time.insert = 'not a time';
  const second = await Promise.allSettled(
    [visit('s4', 'p4', 'e4'), refused, visit('s6', 'p6', 'e6')].map((ws) => store.commit(ws)),
  );
  assert.equal(second[0]!.status, 'fulfilled');
  assert.equal(second[1]!.status, 'rejected');
  assert.equal(second[2]!.status, 'fulfilled');
  for (const s of [second[0]!, second[2]!]) ok((s as PromiseFulfilledResult<CommitResult>).value);

  const stored = (await store.listEvents({}, 100, null)).map((e) => e.id).sort();
  assert.deepEqual(stored, ['e1', 'e2', 'e4', 'e6', 'k1']);
  assert.equal(await store.getProfile('p5'), null);
  assert.equal(await store.getSession('s5'), null);
  for (const id of ['p1', 'p2', 'p4', 'p6']) assert.ok(await store.getProfile(id), id);

  // One session written twice ends the chunk: the second write set is written after the first
  // committed, sees its session and is a session conflict; the one after it is written too.
  const third = await Promise.all(
    [visit('s7', 'p7', 'e7'), visit('s7', 'p8', 'e8'), visit('s9', 'p9', 'e9')].map((ws) => store.commit(ws)),
  );
  ok(third[0]);
  assert.deepEqual(third[1], { ok: false, conflict: 'session' });
  ok(third[2]);
  assert.equal((await store.getSession('s7'))?.record.profile?.id, 'p7');
  assert.equal(await store.getProfile('p8'), null);
  assert.equal(await store.getEvent('e8'), null);
  for (const id of ['e7', 'e9']) assert.notEqual(await store.getEvent(id), null, id);
});

/**
 * Two stored profiles (`known`, `known2`), the sessions `ids` of `known`, and an event of client id
 * `key-stored` on `r2`; a client of the same database, for what the store does not say.
 */
async function storedVisitors(t: TestContext, ids: string[]) {
  const url = await testSchema();
  const store = await openedStore(t, url);
  for (const id of ['known', 'known2']) {
    ok(await store.commit({ profile: { op: 'create', record: newProfile(id, at(0)) }, events: [] }));
  }
  for (const id of ids) {
    ok(
      await store.commit({
        session: { record: session(id, 'known', at(0)), expectVersion: null },
        events: [],
      }),
    );
  }
  ok(await store.commit({ events: [keyed('stored', 'key-stored', { session: { id: 'r2' } })] }));
  const client = new pg.Client(url);
  await client.connect();
  t.after(() => client.end());
  return { store, client };
}

/** A returning visitor's write set: its session touched, its profile kept, one event with a client id. */
function returning(sessionId: string, profileId: string, id: string, clientId: string, ms: number): WriteSet {
  const e = event(id, { session: { id: sessionId }, profile: { id: profileId } }, at(ms));
  e.metadata.client_id = clientId;
  return { touch: { id: sessionId, at: at(ms) }, profile: { op: 'keep', id: profileId }, events: [e] };
}

test("a batch of returning visitors is written by its one statement, which writes no session's row unless every event of a touch proved a duplicate", async (t) => {
  const { store, client } = await storedVisitors(t, ['r1', 'r2', 'r3']);
  // A row's xmin is the transaction that wrote its current version: unchanged, the row was not written.
  const xmin = async (id: string) =>
    (await client.query<{ x: string }>('SELECT xmin::text AS x FROM sessions WHERE id = $1', [id])).rows[0]
      ?.x;
  const before = { r1: await xmin('r1'), r2: await xmin('r2'), r3: await xmin('r3') };

  // Submitted in one turn of the event loop: one batch, which needs no lock and no touch beforehand.
  const outcomes = await Promise.all(
    [
      returning('r1', 'known', 'a1', 'key-a1', 5000),
      returning('r2', 'known2', 'a2', 'key-stored', 6000),
      returning('r3', 'gone', 'a3', 'key-a3', 7000),
    ].map((ws) => store.commit(ws)),
  );
  ok(outcomes[0]);
  ok(outcomes[1]);
  assert.deepEqual(outcomes[1].duplicates, ['a2']);
  assert.deepEqual(outcomes[2], { ok: false, conflict: 'profile' });

  // Its stored event says when the request came: the session's row is as it was.
  assert.equal(await xmin('r1'), before.r1);
  assert.equal((await store.getSession('r1'))?.record.metadata.time.update, at(5000));
  assert.equal((await store.getSession('r1'))?.version, 1);
  // Its only event a duplicate, nothing says it but the row: written.
  assert.notEqual(await xmin('r2'), before.r2);
  assert.equal((await store.getSession('r2'))?.record.metadata.time.update, at(6000));
  // A conflict writes nothing.
  assert.equal(await xmin('r3'), before.r3);
  assert.equal((await store.getSession('r3'))?.record.metadata.time.update, at(0));
  assert.equal(await store.getEvent('a3'), null);
});

test('in a batch written by its one statement, a touch left for after it that fails fails its write set alone', async (t) => {
  const { store, client } = await storedVisitors(t, ['r1', 'r2']);
  // The server refuses every write of a session's time from now on.
  await client.query(`CREATE FUNCTION refuse_touch() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'touch refused'; END $$`);
  await client.query(
    'CREATE TRIGGER refuse_touch BEFORE UPDATE OF update_time ON sessions FOR EACH ROW EXECUTE FUNCTION refuse_touch()',
  );

  const [stored, resent] = await Promise.allSettled([
    store.commit(returning('r1', 'known', 'a1', 'key-a1', 5000)),
    store.commit(returning('r2', 'known2', 'a2', 'key-stored', 5000)),
  ]);
  assert.equal(stored.status, 'fulfilled');
  ok((stored as PromiseFulfilledResult<CommitResult>).value);
  assert.notEqual(await store.getEvent('a1'), null);
  assert.equal((await store.getSession('r1'))?.record.metadata.time.update, at(5000));
  // Its only event a duplicate, its touch refused: it fails, and the session's time stays.
  assert.equal(resent.status, 'rejected');
  assert.equal((await store.getSession('r2'))?.record.metadata.time.update, at(0));
});
