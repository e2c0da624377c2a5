/**
 * A session's latest request across two collector processes on one PostgreSQL database
 * (docs/api.md#last-activity): returning requests on both at once, some of them resending an
 * event already stored, leave the session at the time of the latest one, and each event stored once.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testSchema, usePostgres } from '../support/postgres.js';
import { ok, sql, startCollector, track } from './support.js';

usePostgres();

test("two processes: a session's time is its latest request's, whichever process stored it", async (t) => {
  const url = await testSchema();
  const [a, b] = await Promise.all([startCollector(t, url), startCollector(t, url)]);
  ok(await a.manage('POST', '/event-source', { id: 'web', name: 'Web' }));
  const sid = 'shared-session';
  ok(await a.post('/track', track(sid, { context: { page: { url: 'https://shop.example/' } } })));
  // A row's xmin is the transaction that wrote its current version: unchanged, it was not written.
  const xmin = async () =>
    (await sql<{ x: string }>(url, 'SELECT xmin::text AS x FROM sessions WHERE id = $1', [sid]))[0]!.x;
  const written = await xmin();

  // 40 returning requests on both processes at once, each with an event of its own.
  const context = { page: { url: 'https://shop.example/' } };
  const send = (i: number) =>
    (i % 2 ? a : b).post('/track', track(sid, { context, events: [{ type: 'page-view', id: `evt-${i}` }] }));
  for (const answer of await Promise.all(Array.from({ length: 40 }, (_, i) => send(i)))) ok(answer);
  const stored = async () =>
    (
      await sql<{ n: number; latest: Date }>(
        url,
        "SELECT count(*)::int AS n, max(insert_time) AS latest FROM events WHERE session_id = $1 AND client_id LIKE 'evt-%'",
        [sid],
      )
    )[0]!;
  const first = await stored();
  assert.equal(first.n, 40);
  let session = ok(await b.manage('GET', `/session/${sid}`));
  assert.equal(session.metadata.time.update, first.latest.toISOString());
  // Nothing of the session changed but its activity: its row was not written again.
  assert.equal(await xmin(), written);

  // Ten of them sent again on both at once: all duplicates, none stored, and the time still moves.
  await new Promise((resolve) => setTimeout(resolve, 5));
  const resent = new Date().toISOString();
  for (const answer of await Promise.all(Array.from({ length: 10 }, (_, i) => send(i)))) ok(answer);
  assert.equal((await stored()).n, 40);
  session = ok(await a.manage('GET', `/session/${sid}`));
  assert.ok(session.metadata.time.update >= resent, `${session.metadata.time.update} >= ${resent}`);
});
