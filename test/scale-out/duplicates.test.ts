/**
 * Duplicates across two collector processes on one PostgreSQL database (docs/api.md#duplicates): the
 * same client event ids sent to both at once are stored once.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testSchema, usePostgres } from '../support/postgres.js';
import { ok, sql, startCollector, track } from './support.js';

usePostgres();

test('two processes: the same event ids sent to both at once are each stored once', async (t) => {
  const url = await testSchema();
  const [a, b] = await Promise.all([startCollector(t, url), startCollector(t, url)]);
  ok(await a.manage('POST', '/event-source', { id: 'web', name: 'Web' }));
  const ids = Array.from({ length: 10 }, (_, i) => `evt-${i}`);
  const body = (i: number) =>
    track(`retry-${i % 4}`, {
      events: ids.map((id) => ({ type: 'page-view', id })),
      options: { debugger: true },
    });
  // 30 requests carrying the same ten ids, on both processes, four sessions, all at once.
  const answers = await Promise.all(
    Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).post('/track', body(i))),
  );
  const saved = answers.reduce((sum, answer) => sum + (ok(answer).debugging.events.saved as number), 0);
  const duplicates = answers.flatMap((answer) => answer.body.debugging.events.duplicates as string[]);
  assert.equal(saved, ids.length, 'each id stored by exactly one request');
  assert.equal(duplicates.length, ids.length * 29);
  const rows = await sql<{ client_id: string; n: number }>(
    url,
    'SELECT client_id, count(*)::int AS n FROM events GROUP BY client_id ORDER BY client_id',
  );
  assert.deepEqual(
    rows,
    [...ids].sort().map((id) => ({ client_id: id, n: 1 })),
  );
  for (const id of ids) {
    assert.equal(ok(await b.manage('GET', `/events?client_id=${id}`)).result.length, 1);
  }
});
