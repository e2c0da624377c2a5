/**
 * Replays across two collector processes on one PostgreSQL database (docs/api.md#replay): the same
 * quarantined request replayed on both at once is stored once; one replay answers 200, the others
 * 404, and the record is gone.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testSchema, usePostgres } from '../support/postgres.js';
import { ok, poll, sql, startCollector, track, type Collector, type Json } from './support.js';

usePostgres();

const strict = (required: string[]) => ({
  event_type: 'strict',
  name: 'Strict',
  validation: { enabled: true, json_schema: { 'event@properties': { type: 'object', required } } },
});

/** Replays on each collector at once; answers the statuses, sorted. */
async function replayOnBoth(collectors: Collector[], id: string, each: number): Promise<number[]> {
  const answers = await Promise.all(
    collectors.flatMap((c) =>
      Array.from({ length: each }, () => c.manage('POST', `/event/rejected/${id}/replay`)),
    ),
  );
  for (const answer of answers.filter((a) => a.status === 404)) {
    assert.equal(answer.body.detail, `Rejected request \`${id}\` not found`);
  }
  return answers.map((a) => a.status).sort();
}

test('two processes: replays of one quarantined request on both at once store it once', async (t) => {
  const url = await testSchema();
  const env = { TRACK_REJECTED_RATE_LIMIT: '0' };
  const [a, b] = await Promise.all([startCollector(t, url, env), startCollector(t, url, env)]);
  ok(await a.manage('POST', '/event-source', { id: 'web', name: 'Web' }));
  ok(await a.manage('POST', '/event/management', strict(['x'])));

  const events = (marker: string) => [
    { type: 'strict', properties: { marker } },
    { type: 'strict', properties: { marker, n: 2 } },
  ];
  assert.equal((await a.post('/track', track('replayed', { events: events('track') }))).status, 406);
  assert.equal((await a.post('/collect/strict/web', { marker: 'collect' })).status, 406);
  const records = ok(await a.manage('GET', '/event/rejected?limit=10')).result as Json[];
  const idOf = (endpoint: string) => records.find((r) => r.endpoint === endpoint)!.id as string;

  ok(await a.manage('POST', '/event/management', strict([])));
  // B learns of the fixed schema through LISTEN/NOTIFY: wait until it accepts what it refused.
  await poll(
    async () => (await b.post('/collect/strict/web', { marker: 'probe' })).status,
    (status) => status === 200,
    'the fixed schema on B',
  );

  const each = 8;
  for (const [endpoint, stored] of [
    ['track', 2],
    ['collect', 1],
  ] as const) {
    const id = idOf(endpoint);
    const codes = await replayOnBoth([a, b], id, each);
    assert.deepEqual(codes, [200, ...Array<number>(each * 2 - 1).fill(404)], `${endpoint}: ${codes}`);
    const rows = await sql<{ n: number }>(
      url,
      "SELECT count(*)::int AS n FROM events WHERE coalesce(doc, raw::jsonb)->'properties'->>'marker' = $1",
      [endpoint],
    );
    assert.equal(rows[0]!.n, stored, `${endpoint}: the events are stored once`);
    assert.equal((await b.manage('GET', `/event/rejected/${id}`)).status, 404);
  }
});
