/**
 * The profile part of the storage contract (called from contract.ts for every adapter): profile
 * rules, changes applied on the stored record, identities by their unique key, merges, aliases and
 * erasure of everything a profile left.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { ProfileOp } from '../../src/model/profile-ops.js';
import { newProfile } from '../../src/model/profiles.js';
import type {
  CommitResult,
  EventRecord,
  ProfileChange,
  ProfileRule,
  RejectedRecord,
  SessionRecord,
} from '../../src/model/records.js';
import type { Store } from '../../src/storage/store.js';

export interface ProfileContractHelpers {
  open(t: TestContext): Promise<{ store: Store }>;
  at(ms: number): string;
  event(id: string, overrides?: Partial<EventRecord>): EventRecord;
  session(id: string, profileId: string | null): SessionRecord;
}

const rule = (id: string, eventType: string, n = 1): ProfileRule => ({
  id,
  name: `rule ${id}`,
  enabled: true,
  event_type: eventType,
  source_id: null,
  operations: Array.from({ length: n }, () => ({ op: 'increment' as const, path: 'traits.public.n' })),
});

function committed(result: CommitResult): Extract<CommitResult, { ok: true }> {
  assert.equal(result.ok, true, `expected a committed write set, got ${JSON.stringify(result)}`);
  return result as Extract<CommitResult, { ok: true }>;
}

const change = (at: string, ...ops: ProfileOp[]): ProfileChange => ({ at, steps: [{ event: 'e', ops }] });
const identify = (type: string, value: string): ProfileOp => ({ op: 'identify', type, value });

export function profileContract(h: ProfileContractHelpers): void {
  const { at, event, session } = h;

  /** A stored profile `id` with a session `s-<id>` bound to it and one event. */
  async function stored(store: Store, id: string, ms = 0) {
    return committed(
      await store.commit({
        session: { record: session(`s-${id}`, id), expectVersion: null },
        profile: { op: 'create', record: newProfile(id, at(ms)) },
        events: [event(`e-${id}`, { session: { id: `s-${id}` }, profile: { id } })],
      }),
    );
  }

  test('profile rules: put answers the previous event type, list in first-saved order, delete', async (t) => {
    const { store } = await h.open(t);
    assert.equal(await store.putProfileRule(rule('b', 'purchase')), null);
    assert.equal(await store.putProfileRule(rule('a', 'purchase')), null);
    assert.equal(await store.putProfileRule(rule('c', 'sign-up')), null);
    // Replacing keeps the rule's place, even when it moves to another event type.
    assert.equal(await store.putProfileRule(rule('b', 'sign-up', 2)), 'purchase');
    assert.deepEqual(await store.getProfileRule('b'), rule('b', 'sign-up', 2));
    assert.equal(await store.getProfileRule('nope'), null);
    const ids = async (eventType?: string) => (await store.listProfileRules({ eventType })).map((r) => r.id);
    assert.deepEqual(await ids(), ['b', 'a', 'c']);
    assert.deepEqual(await ids('sign-up'), ['b', 'c']);
    assert.deepEqual(await ids('purchase'), ['a']);
    assert.equal(await store.deleteProfileRule('b'), 'sign-up');
    assert.equal(await store.deleteProfileRule('b'), null);
    assert.deepEqual(await ids(), ['a', 'c']);
    // Values are kept as sent, U+0000 included.
    const odd = {
      ...rule('odd', 'x'),
      operations: [{ op: 'set' as const, path: 'traits.public.v', value: 'a\u0000b' }],
    };
    await store.putProfileRule(odd);
    assert.deepEqual(await store.getProfileRule('odd'), odd);
  });

  test('changes are applied on the stored profile; keep requires the profile to exist', async (t) => {
    const { store } = await h.open(t);
    await stored(store, 'p');
    const inc = change(at(10), { op: 'increment', path: ['traits', 'public', 'n'], value: 2 });
    const kept = committed(
      await store.commit({ profile: { op: 'keep', id: 'p', change: inc }, events: [], answerProfile: true }),
    );
    assert.equal(kept.profileChanged, true);
    assert.equal(kept.profile?.traits.public.n, 2);
    assert.equal(kept.profile?.metadata.time.update, at(10));
    const visited = committed(
      await store.commit({
        session: { record: session('s2', 'p'), expectVersion: null },
        profile: {
          op: 'visit',
          id: 'p',
          at: at(20),
          change: change(at(20), { op: 'increment', path: ['traits', 'public', 'n'], value: 2 }),
        },
        events: [],
        answerProfile: true,
      }),
    );
    assert.equal(visited.profile?.stats.visits, 2);
    assert.equal((await store.getProfile('p'))?.traits.public.n, 4);
    // An operation that changes nothing does not write the profile.
    const same = change(at(30), { op: 'set', path: ['traits', 'public', 'n'], value: 4 });
    const unchanged = committed(
      await store.commit({ profile: { op: 'keep', id: 'p', change: same }, events: [] }),
    );
    assert.equal(unchanged.profileChanged, false);
    assert.equal((await store.getProfile('p'))?.metadata.time.update, at(20));
    // Events naming a profile that no longer exists are a conflict, with or without a change.
    for (const c of [undefined, inc]) {
      const gone = await store.commit({
        session: { record: session('s-gone', 'gone'), expectVersion: null },
        profile: { op: 'keep', id: 'gone', change: c },
        events: [event('e-gone', { profile: { id: 'gone' } })],
      });
      assert.deepEqual(gone, { ok: false, conflict: 'profile' });
    }
    assert.equal(await store.getEvent('e-gone'), null);
    assert.equal(await store.getSession('s-gone'), null);
  });

  test('concurrent changes of one profile are all applied', async (t) => {
    const { store } = await h.open(t);
    await stored(store, 'p');
    const inc = change(at(1), { op: 'increment', path: ['traits', 'public', 'n'], value: 1 });
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        store.commit({
          profile: { op: 'keep', id: 'p', change: inc },
          events: [event(`c${i}`, { profile: { id: 'p' } })],
        }),
      ),
    );
    for (const r of results) committed(r);
    assert.equal((await store.getProfile('p'))?.traits.public.n, 200);
  });

  test('identities: attached by their unique key; a taken one merges into its holder', async (t) => {
    const { store } = await h.open(t);
    await stored(store, 'a', 0);
    await stored(store, 'b', 100);
    const first = committed(
      await store.commit({
        profile: { op: 'keep', id: 'a', change: change(at(200), identify('email', 'x@y')) },
        events: [],
        answerProfile: true,
      }),
    );
    assert.deepEqual(first.profile?.ids, [{ type: 'email', value: 'x@y' }]);
    assert.deepEqual(first.merges, []);
    assert.equal((await store.findProfileByIdentity({ type: 'email', value: 'x@y' }))?.id, 'a');
    assert.equal(await store.findProfileByIdentity({ type: 'email', value: 'nobody' }), null);

    await store.putRejected(rejected('r-b', 's-b', 'b', at(250)));
    const merging = committed(
      await store.commit({
        profile: {
          op: 'keep',
          id: 'b',
          change: change(at(300), identify('phone', '1'), identify('email', 'x@y')),
        },
        // Data that looks like the profile's reference is the client's, and stays as sent.
        events: [event('e-b2', { profile: { id: 'b' }, properties: { profile: { id: 'b' } } })],
      }),
    );
    assert.deepEqual(merging.merges, [{ merged: 'b', into: 'a' }]);
    assert.equal(merging.profile?.id, 'a');
    assert.equal(merging.profileChanged, true);
    const survivor = await store.getProfile('a');
    assert.deepEqual(survivor, merging.profile);
    assert.equal(survivor?.stats.visits, 2);
    assert.equal(survivor?.metadata.time.insert, at(0));
    assert.deepEqual(survivor?.ids, [
      { type: 'email', value: 'x@y' },
      { type: 'phone', value: '1' },
    ]);
    assert.deepEqual(survivor?.merged, [{ id: 'b', time: at(300) }]);
    // The merged id is an alias; everything of it names the survivor.
    assert.deepEqual(await store.getProfile('b'), survivor);
    assert.equal((await store.findProfileByIdentity({ type: 'phone', value: '1' }))?.id, 'a');
    assert.equal((await store.getSession('s-b'))?.record.profile?.id, 'a');
    for (const id of ['e-b', 'e-b2']) assert.deepEqual((await store.getEvent(id))?.profile, { id: 'a' });
    assert.deepEqual((await store.getEvent('e-b2'))?.properties, { profile: { id: 'b' } });
    assert.deepEqual((await store.listEvents({ profileId: 'a' }, 10, null)).map((e) => e.id).sort(), [
      'e-a',
      'e-b',
      'e-b2',
    ]);
    assert.deepEqual(await store.listEvents({ profileId: 'b' }, 10, null), []);
    assert.equal((await store.getRejected('r-b'))?.profile_id, 'a', 'the refused request names the survivor');
    // A write set still naming the merged profile conflicts: its request resolves again.
    const stale = await store.commit({
      profile: { op: 'keep', id: 'b' },
      events: [event('late', { profile: { id: 'b' } })],
    });
    assert.deepEqual(stale, { ok: false, conflict: 'profile' });
    // Erasing by the alias erases the survivor, its identities, aliases and quarantined requests.
    await store.putRejected(rejected('r-other', 's-other', null, at(400)));
    assert.deepEqual(await store.eraseProfile('b'), {
      profiles: 1,
      sessions: 2,
      events: 3,
      identities: 2,
      aliases: 1,
      rejected: 1,
    });
    assert.equal(await store.getProfile('a'), null);
    assert.equal(await store.getProfile('b'), null);
    assert.equal(await store.findProfileByIdentity({ type: 'email', value: 'x@y' }), null);
    assert.equal(await store.getRejected('r-b'), null);
    assert.ok(await store.getRejected('r-other'));
  });

  test('identities: one user_id a profile, two profiles with user_ids never merge', async (t) => {
    const { store } = await h.open(t);
    await stored(store, 'a');
    await stored(store, 'b');
    committed(
      await store.commit({
        profile: {
          op: 'keep',
          id: 'a',
          change: change(at(1), identify('user_id', 'ua'), identify('email', 'a@x')),
        },
        events: [],
      }),
    );
    const b = committed(
      await store.commit({
        profile: {
          op: 'keep',
          id: 'b',
          change: change(
            at(2),
            identify('user_id', 'ub'),
            identify('user_id', 'ub2'),
            identify('email', 'a@x'),
          ),
        },
        events: [],
      }),
    );
    assert.deepEqual(b.merges, []);
    assert.equal(b.notes.filter((n) => /not attached/.test(n)).length, 2, b.notes.join('\n'));
    assert.deepEqual((await store.getProfile('b'))?.ids, [{ type: 'user_id', value: 'ub' }]);
    assert.equal((await store.findProfileByIdentity({ type: 'email', value: 'a@x' }))?.id, 'a');
  });

  test('a new profile attaching a held identity is merged in the same commit', async (t) => {
    const { store } = await h.open(t);
    await stored(store, 'a');
    committed(
      await store.commit({
        profile: { op: 'keep', id: 'a', change: change(at(1), identify('email', 'n@x')) },
        events: [],
      }),
    );
    const created = committed(
      await store.commit({
        session: { record: session('s-new', 'new'), expectVersion: null },
        profile: {
          op: 'create',
          record: newProfile('new', at(5)),
          change: change(at(5), identify('email', 'n@x')),
        },
        events: [event('e-new', { session: { id: 's-new' }, profile: { id: 'new' } })],
      }),
    );
    assert.deepEqual(created.merges, [{ merged: 'new', into: 'a' }]);
    assert.equal(created.profile?.stats.visits, 2);
    assert.equal((await store.getSession('s-new'))?.record.profile?.id, 'a');
    assert.deepEqual((await store.getEvent('e-new'))?.profile, { id: 'a' });
  });

  function rejected(id: string, sessionId: string, profileId: string | null, time: string): RejectedRecord {
    return {
      id,
      time,
      endpoint: 'track',
      source_id: 'src-1',
      session_id: sessionId,
      profile_id: profileId,
      event_types: ['x'],
      detail: 'validation failed with error: event@properties: must be object',
      errors: [{ event: 0, type: 'x', target: 'event@properties', reason: 'must be object' }],
      request: { body: { session: { id: sessionId } }, profile_less: false },
    };
  }
}
