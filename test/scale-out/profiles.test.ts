/**
 * Profiles across two collector processes on one PostgreSQL database (docs/api.md #profile-rules,
 * #merging, #rule-cache): increments from both add up exactly, two processes identifying the same
 * person at the same moment make one survivor, and a rule saved on one applies on the other at once.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testSchema, usePostgres } from '../support/postgres.js';
import { ok, poll, sql, startCollector, track, type Collector, type Json } from './support.js';

usePostgres();

const counting = {
  id: 'count',
  event_type: 'count',
  operations: [
    { op: 'increment', path: 'traits.public.n' },
    { op: 'append', path: 'traits.public.tags', from: 'properties.tag' },
  ],
};

const identifying = {
  id: 'identify',
  event_type: 'identify',
  operations: [
    { op: 'identify', type: 'email', from: 'properties.email' },
    { op: 'identify', type: 'user_id', from: 'properties.user_id' },
  ],
};

async function twoCollectors(
  t: Parameters<typeof startCollector>[0],
): Promise<[Collector, Collector, string]> {
  const url = await testSchema();
  const [a, b] = await Promise.all([startCollector(t, url), startCollector(t, url)]);
  ok(await a.manage('POST', '/event-source', { id: 'web', name: 'Web' }));
  ok(await a.manage('POST', '/profile-rule', counting));
  ok(await a.manage('POST', '/profile-rule', identifying));
  return [a, b, url];
}

test('two processes: 400 concurrent increments of one profile add up exactly', async (t) => {
  const [a, b] = await twoCollectors(t);
  const profileId = ok(await a.post('/track', track('first', { events: [{ type: 'count' }] }))).profile.id;
  // Known sessions bound to the profile on both sides, then requests on them and on new sessions.
  const known = Array.from({ length: 10 }, (_, i) => `known-${i}`);
  for (const id of known) ok(await b.post('/track', track(id, { profile: { id: profileId } })));
  const requests = 400;
  const answers = await Promise.all(
    Array.from({ length: requests }, (_, i) =>
      (i % 2 ? a : b).post(
        '/track',
        track(i % 4 < 2 ? known[i % known.length]! : `new-${i}`, {
          profile: { id: profileId },
          events: [{ type: 'count', properties: { tag: `t${i % 5}` } }],
        }),
      ),
    ),
  );
  for (const answer of answers) assert.equal(ok(answer).profile.id, profileId);
  const profile = ok(await b.manage('GET', `/profile/${profileId}`));
  assert.equal(profile.traits.public.n, 1 + requests);
  assert.deepEqual([...profile.traits.public.tags].sort(), ['t0', 't1', 't2', 't3', 't4']);
  assert.equal(profile.stats.visits, 1 + known.length + requests / 2);
});

test('two processes identifying the same person at the same moment make one survivor, atomically', async (t) => {
  const [a, b, url] = await twoCollectors(t);
  for (let round = 0; round < 15; round++) {
    const email = `same-${round}@example.com`;
    // One profile made through each process, then both identify at the same moment.
    const left = ok(await a.post('/track', track(`l-${round}`))).profile.id as string;
    const right = ok(await b.post('/track', track(`r-${round}`))).profile.id as string;
    const identify = (session: string): Json =>
      track(session, { options: { debugger: true }, events: [{ type: 'identify', properties: { email } }] });
    const [x, y] = await Promise.all([
      a.post('/track', identify(`l-${round}`)),
      b.post('/track', identify(`r-${round}`)),
    ]);
    const survivor = ok(x).profile.id as string;
    assert.equal(ok(y).profile.id, survivor, `round ${round}: both answer the survivor`);
    assert.ok([left, right].includes(survivor));
    const merged = survivor === left ? right : left;
    const merges = [...ok(x).debugging.execution.merges, ...ok(y).debugging.execution.merges];
    assert.deepEqual(merges, [{ merged, into: survivor }], `round ${round}: one merge`);
    const profile = ok(await a.manage('GET', `/profile/${merged}`));
    assert.equal(profile.id, survivor);
    assert.equal(profile.stats.visits, 2);
    assert.deepEqual(profile.ids, [{ type: 'email', value: email }]);
    for (const session of [`l-${round}`, `r-${round}`]) {
      assert.equal(ok(await b.manage('GET', `/session/${session}`)).profile.id, survivor);
    }
  }
  // In the database: no profile left behind, one identity each, every event on a survivor.
  const [counts] = await sql<{ profiles: number; identities: number; aliases: number; orphans: number }>(
    url,
    `SELECT (SELECT count(*)::int FROM profiles) AS profiles, (SELECT count(*)::int FROM identities) AS identities,
      (SELECT count(*)::int FROM profile_aliases) AS aliases,
      (SELECT count(*)::int FROM events e WHERE NOT EXISTS (SELECT FROM profiles p WHERE p.id = e.profile_id)) AS orphans`,
  );
  assert.deepEqual(counts, { profiles: 15, identities: 15, aliases: 15, orphans: 0 });
});

test('two processes: many profiles identifying one person at once, and user_ids that never merge', async (t) => {
  const [a, b, url] = await twoCollectors(t);
  const ids: string[] = [];
  for (let i = 0; i < 30; i++) {
    // The first two hold a user_id each.
    const events = [{ type: 'identify', properties: { user_id: i < 2 ? `u-${i}` : undefined } }];
    ids.push(ok(await (i % 2 ? a : b).post('/track', track(`m-${i}`, { events }))).profile.id);
  }
  const answers = await Promise.all(
    ids.map((_, i) =>
      (i % 2 ? b : a).post(
        '/track',
        track(`m-${i}`, { events: [{ type: 'identify', properties: { email: 'crowd@example.com' } }] }),
      ),
    ),
  );
  const survivors = new Set(answers.map((answer) => ok(answer).profile.id as string));
  // The two profiles with a user_id of their own cannot both join: the crowd, and one apart.
  assert.equal(survivors.size, 2, `survivors: ${[...survivors].join(', ')}`);
  const [{ profiles }] = (await sql<{ profiles: number }>(
    url,
    'SELECT count(*)::int AS profiles FROM profiles',
  )) as [{ profiles: number }];
  assert.equal(profiles, survivors.size);
  const visits = await Promise.all(
    [...survivors].map(async (id) => ok(await a.manage('GET', `/profile/${id}`)).stats.visits),
  );
  assert.equal(
    visits.reduce((x: number, y: number) => x + y, 0),
    30,
  );
  const holders = await sql<{ type: string; n: number }>(
    url,
    'SELECT type, count(DISTINCT profile_id)::int AS n FROM identities GROUP BY type ORDER BY type',
  );
  assert.deepEqual(holders, [
    { type: 'email', n: 1 },
    { type: 'user_id', n: 2 },
  ]);
});

test('a rule saved, moved or deleted on one process applies on the other at once', async (t) => {
  const url = await testSchema();
  const hour = { EVENT_VALIDATOR_TTL: '3600' };
  const [a, b] = await Promise.all([startCollector(t, url, hour), startCollector(t, url, hour)]);
  ok(await a.manage('POST', '/event-source', { id: 'web', name: 'Web' }));
  const profileId = ok(await b.post('/track', track('cached', { events: [{ type: 'signal' }] }))).profile.id;
  const n = async () => ok(await b.manage('GET', `/profile/${profileId}`)).traits.public.n ?? 0;
  // B has cached "no rules for signal" for an hour.
  ok(
    await a.manage('POST', '/profile-rule', {
      id: 'r',
      event_type: 'signal',
      operations: [{ op: 'increment', path: 'traits.public.n' }],
    }),
  );
  const signal = async () => ok(await b.post('/track', track('cached', { events: [{ type: 'signal' }] })));
  const saved = await poll(
    async () => (await signal(), n()),
    (value) => value > 0,
    'the new rule on B',
  );
  t.diagnostic(`rule saved on A applied on B after ${saved.elapsedMs} ms`);
  ok(
    await a.manage('POST', '/profile-rule', {
      id: 'r',
      event_type: 'other',
      operations: [{ op: 'increment', path: 'traits.public.n' }],
    }),
  );
  await poll(
    async () => {
      const before = await n();
      await signal();
      return (await n()) === before;
    },
    (same) => same,
    'the moved rule on B',
  );
  ok(await b.post('/track', track('cached', { events: [{ type: 'other' }] })));
  const moved = await n();
  ok(await a.manage('DELETE', '/profile-rule/r'));
  await poll(
    async () => {
      const before = await n();
      ok(await b.post('/track', track('cached', { events: [{ type: 'other' }] })));
      return (await n()) === before;
    },
    (same) => same,
    'the deleted rule on B',
  );
  assert.ok(moved >= 2);
});
