/**
 * Identity across two collector processes on one PostgreSQL database (docs/api.md #profile-and-session): concurrent
 * first requests of one session resolve to one session and one profile; visits are all counted.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testSchema, usePostgres } from '../support/postgres.js';
import { ok, sql, startCollector, track } from './support.js';

usePostgres();

test('two processes: concurrent first requests of one new session make one session, one profile, one visit', async (t) => {
  const url = await testSchema();
  const [a, b] = await Promise.all([startCollector(t, url), startCollector(t, url)]);
  ok(await a.manage('POST', '/event-source', { id: 'web', name: 'Web' }));

  const rounds = 3;
  for (let round = 0; round < rounds; round++) {
    const sessionId = `race-${round}`;
    // 20 first requests of the same new session, alternately on each process, all at once.
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).post('/track', track(sessionId))),
    );
    const profiles = new Set(answers.map((answer) => ok(answer).profile.id as string));
    assert.equal(profiles.size, 1, `round ${round}: profiles ${[...profiles].join(', ')}`);
    const [profileId] = [...profiles] as [string];
    for (const answer of answers) assert.equal(answer.body.session.id, sessionId);

    assert.equal(ok(await b.manage('GET', `/session/${sessionId}`)).profile.id, profileId);
    const profile = ok(await a.manage('GET', `/profile/${profileId}`));
    assert.equal(profile.stats.visits, 1);
    assert.equal(profile.metadata.time.visit.count, 1);
    const events = ok(await a.manage('GET', `/events?session_id=${sessionId}&limit=100`));
    assert.equal(events.result.length, 20);
    for (const event of events.result) assert.equal(event.profile.id, profileId);
  }
  // Nothing else was created on the way: one profile and one session per round.
  const [counts] = await sql<{ profiles: number; sessions: number }>(
    url,
    'SELECT (SELECT count(*)::int FROM profiles) AS profiles, (SELECT count(*)::int FROM sessions) AS sessions',
  );
  assert.deepEqual(counts, { profiles: rounds, sessions: rounds });
});

test('two processes: new sessions of one known profile arriving at once are each counted as a visit', async (t) => {
  const url = await testSchema();
  const [a, b] = await Promise.all([startCollector(t, url), startCollector(t, url)]);
  ok(await b.manage('POST', '/event-source', { id: 'web', name: 'Web' }));
  const profileId = ok(await a.post('/track', track('first'))).profile.id as string;

  const visits = 40;
  const answers = await Promise.all(
    Array.from({ length: visits }, (_, i) =>
      (i % 2 ? a : b).post('/track', track(`visit-${i}`, { profile: { id: profileId } })),
    ),
  );
  for (const answer of answers) assert.equal(ok(answer).profile.id, profileId);

  const profile = ok(await b.manage('GET', `/profile/${profileId}`));
  assert.equal(profile.stats.visits, 1 + visits);
  assert.equal(profile.metadata.time.visit.count, 1 + visits);
  // A request on a known session is not a visit, whichever process answers it.
  await Promise.all([a.post('/track', track('visit-0')), b.post('/track', track('visit-1'))]).then((all) =>
    all.forEach((answer) => assert.equal(ok(answer).profile.id, profileId)),
  );
  assert.equal(ok(await a.manage('GET', `/profile/${profileId}`)).stats.visits, 1 + visits);
  const [{ sessions }] = (await sql<{ sessions: number }>(
    url,
    'SELECT count(*)::int AS sessions FROM sessions WHERE profile_id = $1',
    [profileId],
  )) as [{ sessions: number }];
  assert.equal(sessions, 1 + visits);
});
