import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import type { CommitResult, EventRecord } from '../../src/model/records.js';
import { testSchema, usePostgres, openedStore } from '../support/postgres.js';
import { at, event, session } from './contract.js';

usePostgres();

/**
 * A session's latest request from its newest event (docs/architecture.md#the-write-path): a
 * returning request that stores an event writes no session row, and deleting events leaves their
 * time in the row.
 */

function ok(result: CommitResult | undefined): asserts result is Extract<CommitResult, { ok: true }> {
  assert.equal(result?.ok, true, JSON.stringify(result));
}

function on(id: string, ms: number, clientId: string | null = null): EventRecord {
  const e = event(id, { session: { id: 's1' } }, at(ms));
  e.metadata.client_id = clientId;
  return e;
}

test('a returning request that stores an event leaves the session row as it was', async (t) => {
  const url = await testSchema();
  const store = await openedStore(t, url);
  const client = new pg.Client(url);
  await client.connect();
  t.after(() => client.end());
  const row = async () =>
    (
      await client.query<{ update_time: Date | null; xmin: string }>(
        'SELECT update_time, xmin::text FROM sessions WHERE id = $1',
        ['s1'],
      )
    ).rows[0];

  ok(
    await store.commit({ session: { record: session('s1', null, at(0)), expectVersion: null }, events: [] }),
  );
  const written = await row();
  const many = Array.from({ length: 20 }, (_, i) =>
    store.commit({
      touch: { id: 's1', at: at(1000 * (i + 1)) },
      events: [on(`e${i}`, 1000 * (i + 1), `key-${i}`)],
    }),
  );
  for (const result of await Promise.all(many)) ok(result);
  assert.deepEqual(await row(), written, 'no version of the row was written');
  assert.equal((await store.getSession('s1'))?.record.metadata.time.update, at(20_000));

  // Only a request whose events are all duplicates writes the time itself.
  ok(await store.commit({ touch: { id: 's1', at: at(30_000) }, events: [on('d', 30_000, 'key-3')] }));
  assert.equal((await row())?.update_time?.toISOString(), at(30_000));
  assert.equal((await store.getSession('s1'))?.record.metadata.time.update, at(30_000));
});

test('deleting the events that gave the time leaves it in the session row', async (t) => {
  const url = await testSchema();
  const store = await openedStore(t, url);
  ok(
    await store.commit({ session: { record: session('s1', null, at(0)), expectVersion: null }, events: [] }),
  );
  ok(await store.commit({ touch: { id: 's1', at: at(5000) }, events: [on('e1', 5000), on('e2', 5000)] }));
  ok(await store.commit({ touch: { id: 's1', at: at(7000) }, events: [on('e3', 7000)] }));
  // An event stored later without counting for the session (saveSession: false) does not give it.
  ok(await store.commit({ events: [on('e4', 9000)] }));
  assert.equal(await store.deleteEventsBefore(at(10_000), 100), 4);
  assert.equal(await store.getEvent('e3'), null);
  assert.equal((await store.getSession('s1'))?.record.metadata.time.update, at(7000));
});
