/**
 * The storage contract: one suite of tests every `Store` adapter must pass unchanged.
 * A test file calls `storeContract(name, factory)` with a factory of fresh, empty stores.
 */
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import type {
  CommitResult,
  EventRecord,
  EventSource,
  EventTypeRecord,
  RejectedRecord,
  SessionRecord,
  WriteSet,
} from '../../src/model/records.js';
import { newProfile } from '../../src/model/profiles.js';
import { deepMerge } from '../../src/model/merge.js';
import { sourceFromInput } from '../../src/domain/sources.js';
import type { EventFilter, EventPosition, Store } from '../../src/storage/store.js';
import { WriteQueueFullError } from '../../src/storage/store.js';
import { profileContract } from './contract-profiles.js';
import { destinationContract } from './destination-contract.js';
import { eventTrustContract } from './contract-events.js';
import { replayContract } from './contract-replay.js';

export interface StoreHandle {
  /** A new store over fresh, empty storage; not opened yet. */
  store: Store;
  /** Another store over the same storage (as a restarted or second process would open it); not opened. */
  again(): Store;
}

export type StoreFactory = (options: { writeQueueLimit: number }) => Promise<StoreHandle>;

const T0 = Date.parse('2026-11-22T05:39:03.607Z');

/** An ISO time `ms` milliseconds after a fixed instant. */
export function at(ms: number): string {
  return new Date(T0 + ms).toISOString();
}

export function event(id: string, overrides: Partial<EventRecord> = {}, insert = at(0)): EventRecord {
  return {
    id,
    type: 'page-view',
    properties: { path: '/', n: 1 },
    context: { page: { title: 'T' } },
    source: { id: 'src-1' },
    session: null,
    profile: null,
    metadata: {
      time: { insert, create: insert, source: 'server' },
      client_id: null,
      ip: '127.0.0.1',
      status: 'collected',
      profile_less: true,
    },
    ...overrides,
  };
}

/**
 * A write set of events built as the pipeline builds them (src/domain/track/events.ts): each with
 * the request's context merged with its own (`own`, by event id), and the parts in `contexts`.
 */
export function withContexts(
  events: EventRecord[],
  request: Record<string, unknown>,
  own: Record<string, Record<string, unknown>> = {},
): WriteSet {
  for (const e of events) e.context = own[e.id] ? deepMerge(request, own[e.id]).value : request;
  return { events, contexts: { request, own: new Map(Object.entries(own)) } };
}

export function session(id: string, profileId: string | null, time = at(0)): SessionRecord {
  return {
    id,
    profile: profileId === null ? null : { id: profileId },
    metadata: { time: { insert: time, update: time } },
    context: { browser: 'x' },
    properties: {},
  };
}

function source(id: string, overrides: Partial<EventSource> = {}): EventSource {
  return { ...sourceFromInput({ id, name: `Source ${id}` }), ...overrides };
}

/** What erasing one profile without identities, aliases or refused requests answers. */
function erased(sessions: number, events: number) {
  return { profiles: 1, sessions, events, identities: 0, aliases: 0, rejected: 0 };
}

/** A byte budget no test reaches. */
const NO_BYTE_BOUND = Number.MAX_SAFE_INTEGER;

export function rejected(id: string, time: string, overrides: Partial<RejectedRecord> = {}): RejectedRecord {
  return {
    id,
    time,
    endpoint: 'track',
    source_id: 'src-1',
    session_id: 's-1',
    event_types: ['purchase'],
    detail: "validation failed with error: event@properties: 'price' is a required property",
    errors: [
      { event: 0, type: 'purchase', target: 'event@properties', reason: "'price' is a required property" },
    ],
    request: { body: { events: [{ type: 'purchase' }] }, profile_less: false },
    ...overrides,
  };
}

/** Newest first by (time, id), ids compared as plain strings. */
function newestFirst(a: { time: string; id: string }, b: { time: string; id: string }): number {
  if (a.time !== b.time) return Date.parse(b.time) - Date.parse(a.time);
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

function ok(result: CommitResult): asserts result is Extract<CommitResult, { ok: true }> {
  assert.equal(result.ok, true, `expected a committed write set, got ${JSON.stringify(result)}`);
}

export function storeContract(name: string, factory: StoreFactory): void {
  /** A fresh, opened store, closed after the test. */
  async function open(t: TestContext, writeQueueLimit = 10_000): Promise<StoreHandle> {
    const handle = await factory({ writeQueueLimit });
    await handle.store.open();
    t.after(() => handle.store.close());
    return handle;
  }

  async function ids(promise: Promise<{ id: string }[]>): Promise<string[]> {
    return (await promise).map((r) => r.id);
  }

  describe(`${name}: store contract`, () => {
    test('open and close: a second store over the same storage opens on the applied migrations', async (t) => {
      const { store, again } = await open(t);
      assert.equal(await store.ping(), true);
      await store.putSource(source('a'));
      await store.close();
      assert.equal(await store.ping(), false, 'a closed store does not answer');
      const second = again();
      await second.open();
      t.after(() => second.close());
      assert.equal(await second.ping(), true);
      assert.deepEqual(await second.getSource('a'), source('a'));
    });

    test('sources: put, get, list in id order, replace, delete', async (t) => {
      const { store } = await open(t);
      assert.equal(await store.getSource('b'), null);
      assert.deepEqual(await store.listSources(), []);
      await store.putSource(source('b'));
      await store.putSource(source('a', { enabled: false, tags: ['x', 'y'] }));
      assert.deepEqual(await store.getSource('a'), source('a', { enabled: false, tags: ['x', 'y'] }));
      assert.deepEqual(await ids(store.listSources()), ['a', 'b']);
      await store.putSource(source('b', { name: 'Renamed', consent: true }));
      assert.deepEqual(await store.getSource('b'), source('b', { name: 'Renamed', consent: true }));
      assert.equal((await store.listSources()).length, 2);
      assert.equal(await store.deleteSource('b'), true);
      assert.equal(await store.deleteSource('b'), false);
      assert.equal(await store.getSource('b'), null);
      assert.deepEqual(await ids(store.listSources()), ['a']);
    });

    test('sessions: insert if absent, update at the expected version, conflicts otherwise', async (t) => {
      const { store } = await open(t);
      assert.equal(await store.getSession('s1'), null);
      const first = session('s1', null);
      ok(await store.commit({ session: { record: first, expectVersion: null }, events: [] }));
      assert.deepEqual(await store.getSession('s1'), { record: first, version: 1 });

      // Inserting a known session is a conflict, and nothing of that write set is stored.
      const dup = await store.commit({
        session: { record: session('s1', 'p-other'), expectVersion: null },
        events: [event('e-dup', { session: { id: 's1' } })],
      });
      assert.deepEqual(dup, { ok: false, conflict: 'session' });
      assert.equal(await store.getEvent('e-dup'), null);
      assert.deepEqual(await store.getSession('s1'), { record: first, version: 1 });

      const bound = { ...session('s1', 'p1', at(1000)), properties: { a: 1 } };
      ok(await store.commit({ session: { record: bound, expectVersion: 1 }, events: [] }));
      assert.deepEqual(await store.getSession('s1'), { record: bound, version: 2 });

      // An update at a stale version, or of an unknown session, is a conflict.
      const stale = await store.commit({
        session: { record: session('s1', 'p2'), expectVersion: 1 },
        events: [event('e-stale')],
      });
      assert.deepEqual(stale, { ok: false, conflict: 'session' });
      assert.equal(await store.getEvent('e-stale'), null);
      assert.deepEqual(await store.getSession('s1'), { record: bound, version: 2 });
      const unknown = await store.commit({
        session: { record: session('s9', null), expectVersion: 1 },
        events: [],
      });
      assert.deepEqual(unknown, { ok: false, conflict: 'session' });
      assert.equal(await store.getSession('s9'), null);
    });

    test('sessions and profiles: many concurrent reads each get their own record, or null', async (t) => {
      const { store } = await open(t);
      const ids = Array.from({ length: 600 }, (_, i) => `s${i}`);
      await Promise.all(
        ids.map((id, i) =>
          i % 2 === 0
            ? store.commit({
                session: { record: session(id, `p${i}`), expectVersion: null },
                profile: { op: 'create', record: newProfile(`p${i}`, at(i)) },
                events: [],
              })
            : null,
        ),
      );
      // More than one statement's worth of ids, some asked twice, half of them unknown.
      const asked = [...ids, ...ids.slice(0, 50)];
      const sessions = await Promise.all(asked.map((id) => store.getSession(id)));
      const profiles = await Promise.all(asked.map((id) => store.getProfile(id.replace('s', 'p'))));
      asked.forEach((id, k) => {
        const i = Number(id.slice(1));
        if (i % 2 === 1) {
          assert.equal(sessions[k], null, id);
          assert.equal(profiles[k], null, id);
        } else {
          assert.equal(sessions[k]?.record.id, id);
          assert.equal(sessions[k]?.record.profile?.id, `p${i}`);
          assert.equal(profiles[k]?.id, `p${i}`);
          assert.equal(profiles[k]?.metadata.time.insert, at(i));
        }
      });
    });

    test('profiles: create, visit on the stored record, conflict on a missing profile', async (t) => {
      const { store } = await open(t);
      const created = newProfile('p1', at(0));
      const r1 = await store.commit({
        session: { record: session('s1', 'p1'), expectVersion: null },
        profile: { op: 'create', record: created },
        events: [],
      });
      assert.deepEqual(r1, {
        ok: true,
        profile: created,
        profileChanged: true,
        merges: [],
        notes: [],
        duplicates: [],
      });
      assert.deepEqual(await store.getProfile('p1'), created);

      const r2 = await store.commit({
        session: { record: session('s2', 'p1', at(5000)), expectVersion: null },
        profile: { op: 'visit', id: 'p1', at: at(5000) },
        events: [],
        answerProfile: true,
      });
      ok(r2);
      const visited = await store.getProfile('p1');
      assert.deepEqual(r2.profile, visited);
      assert.equal(visited?.stats.visits, 2);
      assert.deepEqual(visited?.metadata.time.visit, { last: at(0), current: at(5000), count: 2 });
      assert.equal(visited?.metadata.time.update, at(5000));
      assert.equal(visited?.metadata.time.insert, at(0));

      const missing = await store.commit({
        session: { record: session('s3', 'nope'), expectVersion: null },
        profile: { op: 'visit', id: 'nope', at: at(6000) },
        events: [event('e-missing', { session: { id: 's3' } })],
      });
      assert.deepEqual(missing, { ok: false, conflict: 'profile' });
      assert.equal(await store.getSession('s3'), null, 'the session of a conflicting write set is not kept');
      assert.equal(await store.getEvent('e-missing'), null);
      assert.equal(await store.getProfile('nope'), null);

      const plain = await store.commit({ events: [event('e-plain')] });
      assert.deepEqual(plain, {
        ok: true,
        profile: null,
        profileChanged: false,
        merges: [],
        notes: [],
        duplicates: [],
      });
    });

    test('commit: write sets of one batch are isolated; a conflicting one writes nothing of itself', async (t) => {
      const { store } = await open(t);
      ok(
        await store.commit({ session: { record: session('known', null), expectVersion: null }, events: [] }),
      );
      ok(await store.commit({ profile: { op: 'create', record: newProfile('p1', at(0)) }, events: [] }));

      // Submitted in the same tick: they share one batch.
      const results = await Promise.all([
        store.commit({
          session: { record: session('a', 'pa'), expectVersion: null },
          profile: { op: 'create', record: newProfile('pa', at(1)) },
          events: [event('a1', { session: { id: 'a' } }), event('a2', { session: { id: 'a' } })],
        }),
        store.commit({
          session: { record: session('known', 'pb'), expectVersion: null },
          profile: { op: 'create', record: newProfile('pb', at(1)) },
          events: [event('b1', { session: { id: 'known' } })],
        }),
        store.commit({
          session: { record: session('c', 'missing'), expectVersion: null },
          profile: { op: 'visit', id: 'missing', at: at(1) },
          events: [event('c1', { session: { id: 'c' } })],
        }),
        store.commit({
          session: { record: session('d', 'p1'), expectVersion: null },
          profile: { op: 'visit', id: 'p1', at: at(1) },
          events: [event('d1', { session: { id: 'd' } })],
        }),
        store.commit({
          session: { record: session('known', null), expectVersion: 7 },
          events: [event('e1')],
        }),
      ]);
      assert.equal(results[0]!.ok, true);
      assert.deepEqual(results[1], { ok: false, conflict: 'session' });
      assert.deepEqual(results[2], { ok: false, conflict: 'profile' });
      assert.equal(results[3]!.ok, true);
      assert.deepEqual(results[4], { ok: false, conflict: 'session' });

      assert.notEqual(await store.getEvent('a1'), null);
      assert.notEqual(await store.getEvent('a2'), null);
      assert.notEqual(await store.getProfile('pa'), null);
      assert.notEqual(await store.getEvent('d1'), null);
      assert.equal((await store.getProfile('p1'))?.stats.visits, 2);
      for (const id of ['b1', 'c1', 'e1']) assert.equal(await store.getEvent(id), null, `event ${id}`);
      assert.equal(await store.getProfile('pb'), null);
      assert.equal(await store.getSession('c'), null);
      assert.equal((await store.getSession('known'))?.version, 1);
      assert.equal((await store.getSession('known'))?.record.profile, null);
    });

    test('commit: a failing write set does not fail the others of its batch', async (t) => {
      const { store } = await open(t);
      ok(await store.commit({ events: [event('taken')] }));
      const [bad, good] = await Promise.allSettled([
        store.commit({
          session: { record: session('s-bad', null), expectVersion: null },
          events: [event('taken')],
        }),
        store.commit({
          session: { record: session('s-good', null), expectVersion: null },
          events: [event('fine')],
        }),
      ]);
      assert.equal(bad.status, 'rejected', 'an event id stored twice is an error');
      assert.equal(good.status, 'fulfilled');
      assert.equal(await store.getSession('s-bad'), null);
      assert.notEqual(await store.getSession('s-good'), null);
      assert.notEqual(await store.getEvent('fine'), null);
    });

    test('commit: in one batch, failures and conflicts anywhere leave the other write sets whole', async (t) => {
      const { store } = await open(t);
      ok(await store.commit({ events: [event('taken')] }));
      ok(
        await store.commit({ session: { record: session('known', null), expectVersion: null }, events: [] }),
      );
      ok(await store.commit({ profile: { op: 'create', record: newProfile('p', at(0)) }, events: [] }));
      const kinds = [
        'ok',
        'error',
        'ok',
        'conflict',
        'error',
        'ok',
        'visit-conflict',
        'visit',
        'visit',
        'ok',
      ];
      const settled = await Promise.allSettled(
        kinds.map((kind, i) => {
          const sessionId = kind === 'conflict' || kind === 'visit-conflict' ? 'known' : `s${i}`;
          const ws: WriteSet = {
            session: {
              record: session(sessionId, kind.startsWith('visit') ? 'p' : null),
              expectVersion: null,
            },
            events: [
              event(`e${i}`, { session: { id: sessionId } }),
              event(kind === 'error' ? 'taken' : `f${i}`),
            ],
          };
          if (kind.startsWith('visit')) ws.profile = { op: 'visit', id: 'p', at: at(1000 + i) };
          ws.answerProfile = true;
          return store.commit(ws);
        }),
      );
      kinds.forEach((kind, i) => {
        const outcome = settled[i]!;
        if (kind === 'error') assert.equal(outcome.status, 'rejected', `${i} ${kind}`);
        else assert.equal(outcome.status, 'fulfilled', `${i} ${kind}`);
        const value = outcome.status === 'fulfilled' ? outcome.value : null;
        if (kind.endsWith('conflict'))
          assert.deepEqual(value, { ok: false, conflict: 'session' }, `${i} ${kind}`);
        if (kind === 'ok' || kind === 'visit') assert.equal(value?.ok, true, `${i} ${kind}`);
      });
      for (const [i, kind] of kinds.entries()) {
        const kept = kind === 'ok' || kind === 'visit';
        assert.equal((await store.getEvent(`e${i}`)) !== null, kept, `event of ${i} ${kind}`);
        if (kind !== 'error')
          assert.equal((await store.getEvent(`f${i}`)) !== null, kept, `event f of ${i} ${kind}`);
        if (kind !== 'conflict' && kind !== 'visit-conflict') {
          assert.equal((await store.getSession(`s${i}`)) !== null, kept, `session of ${i} ${kind}`);
        }
      }
      // Two visits kept, the one of the conflicting write set not counted.
      const profile = await store.getProfile('p');
      assert.equal(profile?.stats.visits, 3);
      assert.deepEqual(profile?.metadata.time.visit, { last: at(1007), current: at(1008), count: 3 });
      const [seventh, eighth] = [settled[7]!, settled[8]!];
      assert.ok(
        seventh.status === 'fulfilled' && seventh.value.ok && seventh.value.profile?.stats.visits === 2,
      );
      assert.ok(eighth.status === 'fulfilled' && eighth.value.ok && eighth.value.profile?.stats.visits === 3);
      assert.equal((await store.getSession('known'))?.version, 1);
    });

    test('commit: concurrent visits of one profile are all counted', async (t) => {
      const { store } = await open(t);
      ok(await store.commit({ profile: { op: 'create', record: newProfile('p', at(0)) }, events: [] }));
      const visits = 50;
      const results = await Promise.all(
        Array.from({ length: visits }, (_, i) =>
          store.commit({
            session: { record: session(`s${i}`, 'p'), expectVersion: null },
            profile: { op: 'visit', id: 'p', at: at(1000 + i) },
            events: [event(`e${i}`, { session: { id: `s${i}` }, profile: { id: 'p' } })],
            answerProfile: true,
          }),
        ),
      );
      for (const r of results) ok(r);
      const profile = await store.getProfile('p');
      assert.equal(profile?.stats.visits, 1 + visits);
      assert.equal(profile?.metadata.time.visit.count, 1 + visits);
      const counts = results.map((r) => (r.ok ? r.profile?.stats.visits : 0)).sort((a, b) => a! - b!);
      assert.deepEqual(
        counts,
        Array.from({ length: visits }, (_, i) => i + 2),
        'each visit saw the one before',
      );
      assert.equal((await store.listEvents({ profileId: 'p' }, 1000, null)).length, visits);
    });

    test('events: get, filters, newest first by (insert, id), limit', async (t) => {
      const { store } = await open(t);
      const all = [
        event('e1', { type: 'view', session: { id: 's1' }, profile: { id: 'p1' } }, at(1000)),
        event('e2', { type: 'buy', session: { id: 's1' }, profile: { id: 'p1' } }, at(3000)),
        event(
          'e3',
          { type: 'view', session: { id: 's2' }, profile: { id: 'p2' }, source: { id: 'src-2' } },
          at(2000),
        ),
        event('e4', { type: 'view', session: null, profile: null, source: { id: 'src-2' } }, at(3000)),
        event('e5', { type: 'buy', session: { id: 's2' }, profile: null }, at(500)),
      ];
      ok(await store.commit({ events: all.slice(0, 3) }));
      ok(await store.commit({ events: all.slice(3) }));
      assert.deepEqual(await store.getEvent('e3'), all[2]);
      assert.equal(await store.getEvent('nope'), null);

      assert.deepEqual(await ids(store.listEvents({}, 50, null)), ['e4', 'e2', 'e3', 'e1', 'e5']);
      assert.deepEqual(await ids(store.listEvents({}, 2, null)), ['e4', 'e2']);
      assert.deepEqual(await ids(store.listEvents({ profileId: 'p1' }, 50, null)), ['e2', 'e1']);
      assert.deepEqual(await ids(store.listEvents({ sessionId: 's2' }, 50, null)), ['e3', 'e5']);
      assert.deepEqual(await ids(store.listEvents({ type: 'view' }, 50, null)), ['e4', 'e3', 'e1']);
      assert.deepEqual(await ids(store.listEvents({ sourceId: 'src-2' }, 50, null)), ['e4', 'e3']);
      assert.deepEqual(await ids(store.listEvents({ type: 'buy', sessionId: 's1' }, 50, null)), ['e2']);
      assert.deepEqual(
        await ids(
          store.listEvents({ type: 'view', sourceId: 'src-2', sessionId: 's2', profileId: 'p2' }, 50, null),
        ),
        ['e3'],
      );
      assert.deepEqual(await ids(store.listEvents({ type: 'View' }, 50, null)), [], 'types match exactly');
      assert.deepEqual(await ids(store.listEvents({}, 50, { insert: at(3000), id: 'e2' })), [
        'e3',
        'e1',
        'e5',
      ]);
      assert.deepEqual(await ids(store.listEvents({ type: 'view' }, 1, { insert: at(3000), id: 'e4' })), [
        'e3',
      ]);
    });

    test('events: paging with `after` visits every event once, through many equal insert times', async (t) => {
      const { store } = await open(t);
      const all: EventRecord[] = [];
      // Ids of mixed case and length: the order of ties is the plain string order of ids.
      for (let i = 0; i < 40; i++) all.push(event(`E${i}-${i % 3 ? 'a' : 'B'}`, {}, at(1000)));
      for (let i = 0; i < 15; i++) all.push(event(`x${i}`, {}, at(i % 2 ? 2000 : 0)));
      all.push(event('last', {}, at(999)), event('z', { type: 'other' }, at(1000)));
      // Several write sets in one batch, each with many events.
      const results = await Promise.all(
        [0, 1, 2, 3].map((k) => store.commit({ events: all.filter((_, i) => i % 4 === k) })),
      );
      for (const r of results) ok(r);

      const expected = all
        .filter((e) => e.type === 'page-view')
        .map((e) => ({ id: e.id, time: e.metadata.time.insert }))
        .sort(newestFirst)
        .map((e) => e.id);
      for (const size of [1, 7, 40, 1000]) {
        const seen: string[] = [];
        let after: EventPosition | null = null;
        for (;;) {
          const page = await store.listEvents({ type: 'page-view' }, size, after);
          seen.push(...page.map((e) => e.id));
          if (page.length < size) break;
          const last = page.at(-1)!;
          after = { insert: last.metadata.time.insert, id: last.id };
        }
        assert.deepEqual(seen, expected, `page size ${size}`);
      }
    });

    test('events: requests of many events, interleaved by id at one insert time, paged by every filter', async (t) => {
      const { store } = await open(t);
      const types = ['view', 'buy', 'scroll'];
      // Three requests of 120 events each, at one instant: their ids interleave.
      const requests = ['a', 'b', 'c'].map((r, k) =>
        Array.from({ length: 120 }, (_, i) =>
          event(
            `id-${String(i).padStart(3, '0')}-${r}`,
            {
              type: types[(i + k) % 3]!,
              session: { id: `s-${r}` },
              profile: k === 2 ? null : { id: `p-${r}` },
              source: { id: k === 1 ? 'src-2' : 'src-1' },
            },
            at(5000),
          ),
        ),
      );
      // One more request whose events are at another instant, and one with events of two instants.
      requests.push([event('older', { session: { id: 's-a' } }, at(4000))]);
      requests.push([event('mixed-1', {}, at(6000)), event('mixed-2', {}, at(3000))]);
      const results = await Promise.all(requests.map((events) => store.commit({ events })));
      for (const r of results) ok(r);
      const all = requests.flat();
      for (const e of [all[0]!, all[119]!, all[241]!, all.at(-1)!])
        assert.deepEqual(await store.getEvent(e.id), e);

      const order = (events: EventRecord[]) =>
        events
          .map((e) => ({ id: e.id, time: e.metadata.time.insert }))
          .sort(newestFirst)
          .map((e) => e.id);
      const filters: [EventFilter, (e: EventRecord) => boolean][] = [
        [{}, () => true],
        [{ type: 'buy' }, (e) => e.type === 'buy'],
        [{ sessionId: 's-a' }, (e) => e.session?.id === 's-a'],
        [{ profileId: 'p-b' }, (e) => e.profile?.id === 'p-b'],
        [{ sourceId: 'src-1', type: 'scroll' }, (e) => e.source.id === 'src-1' && e.type === 'scroll'],
      ];
      for (const [filter, matches] of filters) {
        const expected = order(all.filter(matches));
        for (const size of [1, 50, 1000]) {
          const seen: string[] = [];
          let after: EventPosition | null = null;
          for (;;) {
            const page = await store.listEvents(filter, size, after);
            seen.push(...page.map((e) => e.id));
            if (page.length < size) break;
            const last = page.at(-1)!;
            after = { insert: last.metadata.time.insert, id: last.id };
          }
          assert.deepEqual(seen, expected, `${JSON.stringify(filter)}, page size ${size}`);
        }
      }
    });

    test('records round-trip unchanged: times, nested values, unusual strings', async (t) => {
      const { store } = await open(t);
      const properties = {
        zeta: 1,
        alpha: { nested: [1, 2.5, -0.125, null, true, 'x'], deep: { b: 1, a: 2 } },
        nul: 'a\u0000b',
        lone: 'x\ud800y',
        emoji: '😀 Zürich',
        quote: 'a"b\\c\'d',
        big: 12345678901234,
        empty: {},
      };
      const e = event(
        'odd',
        { properties, context: { 'a.b': { '': 'empty key' } } },
        '2026-11-22T05:39:03.607Z',
      );
      const s = { ...session('s-odd', null), properties: { ...properties } };
      ok(await store.commit({ session: { record: s, expectVersion: null }, events: [e] }));
      const read = await store.getEvent('odd');
      assert.deepEqual(read, e);
      assert.equal(read?.metadata.time.insert, '2026-11-22T05:39:03.607Z');
      assert.deepEqual((await store.getSession('s-odd'))?.record, s);
      const r = rejected('r-odd', at(0), { request: { body: properties } });
      await store.putRejected(r);
      assert.deepEqual(await store.getRejected('r-odd'), r);
      assert.deepEqual(await store.listRejected({}, 10, null), [r]);
    });

    test('ids and types holding U+0000 are stored and found', async (t) => {
      const { store } = await open(t);
      const [sid, pid, eid, type] = ['s\u00001', 'p\u0000', '\u0000e', 'view\u0000'];
      assert.equal(await store.getSession(sid), null);
      assert.equal(await store.getSource('\u0000'), null);
      assert.equal(await store.getEventType('\u0000'), null);
      const record = session(sid, pid);
      ok(
        await store.commit({
          session: { record, expectVersion: null },
          profile: { op: 'create', record: newProfile(pid, at(0)) },
          events: [event(eid, { type, session: { id: sid }, profile: { id: pid } })],
        }),
      );
      assert.deepEqual(await store.getSession(sid), { record, version: 1 });
      assert.equal((await store.getProfile(pid))?.id, pid);
      assert.equal((await store.getEvent(eid))?.type, type);
      assert.deepEqual(await ids(store.listEvents({ sessionId: sid, type, profileId: pid }, 10, null)), [
        eid,
      ]);
      await store.putRejected(rejected('r\u0000', at(0), { event_types: [type], source_id: '\u0000' }));
      assert.deepEqual(await ids(store.listRejected({ eventType: type, sourceId: '\u0000' }, 10, null)), [
        'r\u0000',
      ]);
      assert.deepEqual(await store.eraseProfile(pid), erased(1, 1));
    });

    test('eraseProfile: the profile, its sessions and their events, with counts', async (t) => {
      const { store } = await open(t);
      ok(
        await store.commit({
          session: { record: session('s1', 'p'), expectVersion: null },
          profile: { op: 'create', record: newProfile('p', at(0)) },
          events: [1, 2, 3].map((i) => event(`s1-${i}`, { session: { id: 's1' }, profile: { id: 'p' } })),
        }),
      );
      // A profile-less event on a session of the profile, and an event of the profile on another session.
      ok(
        await store.commit({
          session: { record: session('s2', 'p'), expectVersion: null },
          events: [event('s2-1', { session: { id: 's2' } }), event('s2-2', { session: { id: 's2' } })],
        }),
      );
      ok(
        await store.commit({
          session: { record: session('s3', 'q'), expectVersion: null },
          profile: { op: 'create', record: newProfile('q', at(0)) },
          events: [
            event('s3-p', { session: { id: 's3' }, profile: { id: 'p' } }),
            event('s3-q', { session: { id: 's3' }, profile: { id: 'q' } }),
          ],
        }),
      );
      assert.deepEqual(await store.eraseProfile('p'), erased(2, 6));
      assert.equal(await store.getProfile('p'), null);
      assert.equal(await store.getSession('s1'), null);
      assert.equal(await store.getSession('s2'), null);
      assert.deepEqual(await ids(store.listEvents({}, 50, null)), ['s3-q']);
      assert.notEqual(await store.getProfile('q'), null);
      assert.notEqual(await store.getSession('s3'), null);
      assert.equal(await store.eraseProfile('p'), null);
      assert.equal(await store.eraseProfile('unknown'), null);
      assert.deepEqual(await store.eraseProfile('q'), erased(1, 1));
    });

    test('events of a session written before and after the session was stored: listed together, erased together', async (t) => {
      const { store } = await open(t);
      const on = (id: string, ms: number, type = 'view') =>
        event(id, { type, session: { id: 's' }, profile: null }, at(ms));
      // Events first (a request with saveSession false), then the session, then more events.
      ok(await store.commit({ events: [on('early-1', 100), on('early-2', 300, 'buy')] }));
      ok(
        await store.commit({
          session: { record: session('s', 'p'), expectVersion: null },
          profile: { op: 'create', record: newProfile('p', at(0)) },
          events: [on('with-session', 200)],
        }),
      );
      ok(await store.commit({ events: [on('late', 400, 'buy'), on('late-same-time', 300)] }));
      ok(await store.commit({ events: [event('other', { session: { id: 's-other' } }, at(250))] }));
      assert.deepEqual(await ids(store.listEvents({ sessionId: 's' }, 50, null)), [
        'late',
        'late-same-time',
        'early-2',
        'with-session',
        'early-1',
      ]);
      assert.deepEqual(
        await ids(store.listEvents({ sessionId: 's' }, 2, { insert: at(300), id: 'late-same-time' })),
        ['early-2', 'with-session'],
      );
      assert.deepEqual(await ids(store.listEvents({ sessionId: 's', type: 'buy' }, 50, null)), [
        'late',
        'early-2',
      ]);
      assert.deepEqual(await store.eraseProfile('p'), erased(1, 5));
      assert.deepEqual(await ids(store.listEvents({}, 50, null)), ['other']);
    });

    test('event types: put, get, list, replace, delete; json_schema keeps its key order', async (t) => {
      const { store } = await open(t);
      const schema = (n: number) => ({ type: 'object', required: [`k${n}`], properties: { z: {}, a: {} } });
      // Deliberately neither alphabetical nor by key length.
      const targets = [
        'session@properties',
        'event@properties.price',
        'profile@...',
        'event@...',
        'event@context',
      ];
      const record: EventTypeRecord = {
        event_type: 'purchase',
        name: 'Purchase',
        description: '',
        tags: ['b', 'a'],
        validation: { enabled: true, json_schema: Object.fromEntries(targets.map((k, i) => [k, schema(i)])) },
      };
      assert.equal(await store.getEventType('purchase'), null);
      await store.putEventType(record);
      await store.putEventType({ ...record, event_type: 'Purchase', name: 'upper' });
      const read = await store.getEventType('purchase');
      assert.deepEqual(read, record);
      assert.deepEqual(Object.keys(read!.validation.json_schema), targets);
      assert.deepEqual(Object.keys(read!), Object.keys(record));
      const whole = read!.validation.json_schema['event@...'] as { properties: object };
      assert.deepEqual(Object.keys(whole.properties), ['z', 'a']);
      assert.equal((await store.getEventType('Purchase'))?.name, 'upper', 'event types match exactly');
      const listed = await store.listEventTypes();
      assert.deepEqual(
        listed.map((r) => r.event_type),
        ['Purchase', 'purchase'],
      );
      assert.deepEqual(Object.keys(listed[1]!.validation.json_schema), targets);

      const reordered = [...targets].reverse();
      const replaced: EventTypeRecord = {
        ...record,
        description: 'new',
        validation: {
          enabled: false,
          json_schema: Object.fromEntries(reordered.map((k, i) => [k, schema(i)])),
        },
      };
      await store.putEventType(replaced);
      assert.deepEqual(
        Object.keys((await store.getEventType('purchase'))!.validation.json_schema),
        reordered,
      );
      assert.deepEqual(await store.getEventType('purchase'), replaced);
      assert.equal(await store.deleteEventType('purchase'), true);
      assert.equal(await store.deleteEventType('purchase'), false);
      assert.equal(await store.getEventType('purchase'), null);
      assert.equal((await store.listEventTypes()).length, 1);
    });

    test('rejected: put, get, list newest first with filters and paging, delete', async (t) => {
      const { store } = await open(t);
      const records = [
        rejected('r1', at(1000), { event_types: ['purchase', 'page-view'] }),
        rejected('r2', at(3000), { event_types: ['page-view'], source_id: 'src-2' }),
        rejected('r3', at(2000), { event_types: ['purchase'], endpoint: 'collect', session_id: null }),
        rejected('r4', at(3000), { event_types: ['a', 'b', 'purchase'], source_id: 'src-2' }),
        rejected('r5', at(2000), { event_types: [] }),
      ];
      for (const r of records) await store.putRejected(r);
      assert.deepEqual(await store.getRejected('r3'), records[2]);
      assert.equal(await store.getRejected('nope'), null);
      assert.deepEqual(await ids(store.listRejected({}, 50, null)), ['r4', 'r2', 'r5', 'r3', 'r1']);
      assert.deepEqual(await ids(store.listRejected({ eventType: 'purchase' }, 50, null)), [
        'r4',
        'r3',
        'r1',
      ]);
      assert.deepEqual(await ids(store.listRejected({ eventType: 'page-view' }, 50, null)), ['r2', 'r1']);
      assert.deepEqual(await ids(store.listRejected({ eventType: 'purch' }, 50, null)), []);
      assert.deepEqual(await ids(store.listRejected({ sourceId: 'src-2' }, 50, null)), ['r4', 'r2']);
      assert.deepEqual(
        await ids(store.listRejected({ sourceId: 'src-2', eventType: 'purchase' }, 50, null)),
        ['r4'],
      );
      assert.deepEqual(await ids(store.listRejected({}, 2, null)), ['r4', 'r2']);
      assert.deepEqual(await ids(store.listRejected({}, 2, { insert: at(3000), id: 'r2' })), ['r5', 'r3']);
      assert.deepEqual(
        await ids(store.listRejected({ eventType: 'purchase' }, 5, { insert: at(3000), id: 'r4' })),
        ['r3', 'r1'],
      );
      assert.equal(await store.deleteRejected('r2'), true);
      assert.equal(await store.deleteRejected('r2'), false);
      assert.deepEqual(await ids(store.listRejected({}, 50, null)), ['r4', 'r5', 'r3', 'r1']);
    });

    test('rejected: prune by age, then by count keeping the newest', async (t) => {
      const { store } = await open(t);
      for (let i = 0; i < 10; i++) await store.putRejected(rejected(`r${i}`, at(i * 1000)));
      await store.putRejected(rejected('r9b', at(9000)));
      assert.equal(await store.pruneRejected(at(3000), 100, NO_BYTE_BOUND), 3, 'older than the bound');
      assert.deepEqual(await ids(store.listRejected({}, 50, null)), [
        'r9b',
        'r9',
        'r8',
        'r7',
        'r6',
        'r5',
        'r4',
        'r3',
      ]);
      assert.equal(await store.pruneRejected(at(0), 3, NO_BYTE_BOUND), 5, 'all but the newest 3');
      assert.deepEqual(await ids(store.listRejected({}, 50, null)), ['r9b', 'r9', 'r8']);
      assert.equal(
        await store.pruneRejected(at(8500), 2, NO_BYTE_BOUND),
        1,
        'a record past both bounds counts once',
      );
      assert.deepEqual(await ids(store.listRejected({}, 50, null)), ['r9b', 'r9']);
      assert.equal(await store.pruneRejected(at(0), 5, NO_BYTE_BOUND), 0);
      assert.equal(await store.pruneRejected(at(0), 0, NO_BYTE_BOUND), 2);
    });

    test('rejected: prune by bytes keeps the newest records that fit', async (t) => {
      const { store } = await open(t);
      const sizes: number[] = [];
      for (let i = 0; i < 6; i++) {
        const record = rejected(`r${i}`, at(i * 1000), {
          request: { body: { pad: 'x'.repeat(100 * (i + 1)) } },
        });
        sizes.push(await store.putRejected(record));
        assert.ok(sizes[i]! > JSON.stringify(record.request).length, 'the size covers the record');
      }
      const newestThree = sizes[5]! + sizes[4]! + sizes[3]!;
      assert.equal(await store.pruneRejected(at(0), 100, newestThree), 3);
      assert.deepEqual(await ids(store.listRejected({}, 50, null)), ['r5', 'r4', 'r3']);
      assert.equal(
        await store.pruneRejected(at(0), 100, newestThree - 1),
        1,
        'one byte short: one more goes',
      );
      assert.deepEqual(await ids(store.listRejected({}, 50, null)), ['r5', 'r4']);
    });

    test('rejected: a record put again under its id replaces it', async (t) => {
      const { store } = await open(t);
      const first = rejected('r1', at(1000));
      await store.putRejected(first);
      const again = {
        ...first,
        detail: 'validation failed with error: event@properties: /price must be number',
        errors: [{ event: 0, type: 'purchase', target: 'event@properties', reason: '/price must be number' }],
      };
      await store.putRejected(again);
      assert.deepEqual(await store.getRejected('r1'), again);
      assert.deepEqual(await ids(store.listRejected({}, 50, null)), ['r1']);
    });

    test('touch: the latest request of a session not rewritten is read as its metadata.time.update', async (t) => {
      const { store } = await open(t);
      const first = session('s1', null, at(0));
      ok(await store.commit({ session: { record: first, expectVersion: null }, events: [] }));
      const on = (id: string, ms: number) => event(id, { session: { id: 's1' } }, at(ms));
      ok(await store.commit({ touch: { id: 's1', at: at(5000) }, events: [on('e1', 5000)] }));
      let read = await store.getSession('s1');
      assert.equal(read?.record.metadata.time.update, at(5000));
      assert.equal(read?.record.metadata.time.insert, at(0));
      assert.equal(read?.version, 1, 'a touch is not a new version');
      assert.deepEqual({ ...read!.record, metadata: first.metadata }, first, 'nothing else changes');

      // An earlier request committed later does not move it back; a touch alone is a write set.
      ok(await store.commit({ touch: { id: 's1', at: at(3000) }, events: [on('e0', 3000)] }));
      ok(await store.commit({ touch: { id: 's1', at: at(7000) }, events: [] }));
      read = await store.getSession('s1');
      assert.equal(read?.record.metadata.time.update, at(7000));

      // The events of touching requests belong to the session like any other.
      assert.deepEqual(await ids(store.listEvents({ sessionId: 's1' }, 50, null)), ['e1', 'e0']);

      // A rewrite of the record at its version still works, and its own time counts when later.
      const rewritten = { ...session('s1', null, at(0)), properties: { a: 1 } };
      rewritten.metadata.time.update = at(9000);
      ok(await store.commit({ session: { record: rewritten, expectVersion: 1 }, events: [] }));
      read = await store.getSession('s1');
      assert.deepEqual(read, { record: rewritten, version: 2 });
      ok(await store.commit({ touch: { id: 's1', at: at(12000) }, events: [on('e2', 12000)] }));
      assert.equal((await store.getSession('s1'))?.record.metadata.time.update, at(12000));

      // Several touches of one session in one batch, and a touch of a session that is not stored.
      const batch = [15000, 14000, 16000].map((ms, i) =>
        store.commit({ touch: { id: 's1', at: at(ms) }, events: [on(`b${i}`, ms)] }),
      );
      batch.push(store.commit({ touch: { id: 'gone', at: at(20000) }, events: [event('g')] }));
      for (const result of await Promise.all(batch)) ok(result);
      assert.equal((await store.getSession('s1'))?.record.metadata.time.update, at(16000));
      assert.equal(await store.getSession('gone'), null);
      assert.notEqual(await store.getEvent('g'), null);
    });

    test('touch: only the events of requests that count for the session, and stored ones, move its time', async (t) => {
      const { store, again } = await open(t);
      ok(
        await store.commit({
          session: { record: session('s1', null, at(0)), expectVersion: null },
          events: [],
        }),
      );
      const on = (id: string, ms: number, clientId: string | null = null) => {
        const e = event(id, { session: { id: 's1' } }, at(ms));
        e.metadata.client_id = clientId;
        return e;
      };
      ok(await store.commit({ touch: { id: 's1', at: at(5000) }, events: [on('e1', 5000, 'key-1')] }));
      assert.equal((await store.getSession('s1'))?.record.metadata.time.update, at(5000));

      // A request that does not count as the session's activity (saveSession: false) stores its
      // event and leaves the time.
      ok(await store.commit({ events: [on('e2', 8000)] }));
      assert.notEqual(await store.getEvent('e2'), null);
      assert.equal((await store.getSession('s1'))?.record.metadata.time.update, at(5000));

      // A touching request whose only event is a duplicate (not stored again) still moves it.
      const resent = await store.commit({
        touch: { id: 's1', at: at(9000) },
        events: [on('e3', 9000, 'key-1')],
      });
      ok(resent);
      assert.deepEqual(resent.duplicates, ['e3']);
      assert.equal(await store.getEvent('e3'), null);
      assert.equal((await store.getSession('s1'))?.record.metadata.time.update, at(9000));

      // The same in a batch with other write sets of the session, one of them stored earlier in time.
      const batch = await Promise.all([
        store.commit({ touch: { id: 's1', at: at(11000) }, events: [on('e4', 11000, 'key-1')] }),
        store.commit({ touch: { id: 's1', at: at(10000) }, events: [on('e5', 10000, 'key-5')] }),
      ]);
      for (const result of batch) ok(result);
      assert.equal((await store.getSession('s1'))?.record.metadata.time.update, at(11000));

      // As stored, not as a cache of the store remembers it: read by a new store over the same storage
      // (with a later event that does not count among them).
      ok(await store.commit({ events: [on('e6', 20000)] }));
      await store.close();
      const reopened = again();
      await reopened.open();
      t.after(() => reopened.close());
      assert.equal((await reopened.getSession('s1'))?.record.metadata.time.update, at(11000));
    });

    test('deleteEventsBefore: the oldest events in small batches, until none is left before the time', async (t) => {
      const { store } = await open(t);
      // 12 requests of 1 to 3 events at times 0 s … 11 s, on sessions, types and profiles.
      const all: EventRecord[] = [];
      for (let r = 0; r < 12; r++) {
        const events = Array.from({ length: (r % 3) + 1 }, (_, k) =>
          event(`r${r}-${k}`, { type: k === 0 ? 'view' : 'buy', session: { id: `s${r % 2}` } }, at(r * 1000)),
        );
        all.push(...events);
        ok(await store.commit({ events }));
      }
      const olderThan = (ms: number) => all.filter((e) => e.metadata.time.insert < at(ms)).length;
      let deleted = 0;
      for (let round = 0; round < 100; round++) {
        const n = await store.deleteEventsBefore(at(6000), 2);
        assert.ok(n <= 3, `a batch of about 2 deleted ${n}: never more than one request's events over`);
        if (n === 0) break;
        deleted += n;
      }
      assert.equal(deleted, olderThan(6000));
      const left = (await store.listEvents({}, 100, null)).map((e) => e.id);
      assert.deepEqual(
        left.sort(),
        all
          .filter((e) => e.metadata.time.insert >= at(6000))
          .map((e) => e.id)
          .sort(),
      );
      assert.equal(await store.getEvent('r0-0'), null);
      assert.notEqual(await store.getEvent('r6-0'), null);
      for (const filter of [
        { type: 'buy' },
        { sessionId: 's0' },
        { sessionId: 's1' },
        { sourceId: 'src-1' },
      ]) {
        const listed = await store.listEvents(filter, 100, null);
        assert.ok(
          listed.every((e) => e.metadata.time.insert >= at(6000)),
          JSON.stringify(filter),
        );
      }
      assert.equal(await store.deleteEventsBefore(at(6000), 1000), 0);
      assert.equal((await store.deleteEventsBefore(at(100_000), 1000)) > 0, true);
      while ((await store.deleteEventsBefore(at(100_000), 1000)) > 0);
      assert.deepEqual(await store.listEvents({}, 100, null), []);
    });

    test('close commits what is queued before releasing the database', async (t) => {
      const { store, again } = await open(t);
      const pending = Array.from({ length: 30 }, (_, i) =>
        store.commit({
          session: { record: session(`s${i}`, null), expectVersion: null },
          events: [event(`e${i}`, { session: { id: `s${i}` } })],
        }),
      );
      assert.ok(store.queueDepth > 0, 'commits are queued');
      await store.close();
      for (const r of await Promise.all(pending)) ok(r);
      assert.equal(store.queueDepth, 0);
      const reopened = again();
      await reopened.open();
      t.after(() => reopened.close());
      assert.equal((await reopened.listEvents({}, 100, null)).length, 30);
      assert.equal((await reopened.getSession('s29'))?.version, 1);
    });

    eventTrustContract((t) => open(t));
    replayContract((t) => open(t));

    test("contexts: a committed write's events read back with their merged context, kept once or not", async (t) => {
      const { store } = await open(t);
      // Large enough to be kept once (src/storage/contexts.ts), with an event of a context of its own.
      const request = { page: { url: 'https://example.com/', title: 'T' }, blob: 'b'.repeat(10_000) };
      const own = { page: { title: 'own' }, screen: { width: 360 } };
      const large = withContexts(
        [
          event('c1', { session: { id: 's1' }, profile: { id: 'p' } }),
          event('c2', { session: { id: 's1' }, profile: { id: 'p' }, type: 'click' }),
          event('c3', { session: { id: 's1' }, profile: { id: 'p' } }),
        ],
        request,
        { c2: own },
      );
      ok(
        await store.commit({
          ...large,
          session: { record: session('s1', 'p'), expectVersion: null },
          profile: { op: 'create', record: newProfile('p', at(0)) },
        }),
      );
      // Small: stored in each event as it is; keyed: a duplicate is left out, the others keep it.
      const small = withContexts([event('d1'), event('d2')], { app: { v: 1 } }, { d2: { app: { v: 2 } } });
      ok(await store.commit(small));
      const keyedSet = withContexts(
        [event('k1'), event('k2'), event('k3')].map((e, i) => {
          e.metadata.client_id = i === 2 ? 'k-1' : `k-${i + 1}`;
          return e;
        }),
        request,
        { k2: own },
      );
      const keyedResult = await store.commit(keyedSet);
      ok(keyedResult);
      assert.deepEqual(keyedResult.duplicates, ['k3']);

      const written = [...large.events, ...small.events, ...keyedSet.events.slice(0, 2)];
      const merged = new Map(written.map((e) => [e.id, e.context]));
      assert.deepEqual(merged.get('c2'), {
        ...request,
        page: { url: 'https://example.com/', title: 'own' },
        screen: { width: 360 },
      });
      for (const e of written) assert.deepEqual((await store.getEvent(e.id))?.context, e.context, e.id);
      const contexts = (events: EventRecord[]) => events.map((e) => [e.id, e.context]);
      const expected = (...list: string[]) => list.map((id) => [id, merged.get(id)]);
      assert.deepEqual(
        contexts(await store.listEvents({}, 50, null)).sort(),
        expected('c1', 'c2', 'c3', 'd1', 'd2', 'k1', 'k2').sort(),
      );
      assert.deepEqual(contexts(await store.listEvents({ sessionId: 's1' }, 2, null)), expected('c3', 'c2'));
      assert.deepEqual(
        contexts(await store.listEvents({ profileId: 'p', type: 'click' }, 50, null)),
        expected('c2'),
      );
      assert.deepEqual(
        contexts(await store.listEvents({ sessionId: 's1', since: at(-1000), until: at(1000) }, 50, null)),
        expected('c3', 'c2', 'c1'),
      );
      assert.deepEqual(contexts(await store.listEvents({ clientId: 'k-2' }, 50, null)), expected('k2'));
      const delivered = await store.destinations.readIds(['c2', 'd2', 'k1', 'c1']);
      assert.deepEqual(
        contexts(JSON.parse(`[${delivered.json}]`) as EventRecord[]),
        expected('c2', 'd2', 'k1', 'c1'),
      );

      assert.deepEqual(await store.eraseProfile('p'), erased(1, 3));
      assert.equal(await store.getEvent('c2'), null);
      assert.equal(await store.deleteEventsBefore(at(1), 1000), 4);
      assert.deepEqual(await store.listEvents({}, 50, null), []);
    });

    test('commit rejects with WriteQueueFullError past the queue limit', async (t) => {
      const { store } = await open(t, 3);
      const attempts = Array.from({ length: 7 }, (_, i) => store.commit({ events: [event(`q${i}`)] }));
      assert.equal(store.queueDepth, 3);
      const settled = await Promise.allSettled(attempts);
      const full = settled.filter((s) => s.status === 'rejected');
      assert.equal(full.length, 4);
      for (const s of full) assert.ok((s as PromiseRejectedResult).reason instanceof WriteQueueFullError);
      assert.equal(settled.filter((s) => s.status === 'fulfilled').length, 3);
      assert.equal(store.queueDepth, 0);
      assert.equal((await store.listEvents({}, 50, null)).length, 3);
      // The queue takes new work once it has room again.
      ok(await store.commit({ events: [event('after')] }));
    });

    profileContract({ open, at, event, session });
  });
  destinationContract(name, factory);
}
