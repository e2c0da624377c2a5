/**
 * Delivery order on PostgreSQL when transactions commit out of order (docs/architecture.md#delivery):
 * an event whose transaction is still open when a later one commits is never passed over.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import type { EventSelector } from '../../src/model/destinations.js';
import { startService } from '../helpers.js';
import { testSchema, usePostgres, openedStore } from '../support/postgres.js';
import { startReceiver, until } from '../support/receiver.js';
import { event } from './contract.js';

usePostgres();

const ALL: EventSelector = { eventTypes: [], sourceIds: [] };

/** A transaction of its own on the database, as another collector's slow commit. */
async function openTransaction(url: string): Promise<pg.Client> {
  const client = new pg.Client(url);
  await client.connect();
  await client.query('BEGIN');
  return client;
}

const insertEvent = (client: pg.Client, id: string) =>
  client.query(
    `INSERT INTO events (id, insert_time, type, source_id, doc) VALUES ($1, now(), 'page-view', 'src-1', $2)`,
    [id, JSON.stringify(event(id))],
  );

test('a later transaction committed first does not make the reader pass over an earlier one', async (t) => {
  const url = await testSchema();
  const store = await openedStore(t, url);
  await store.destinations.put({
    id: 'd',
    name: '',
    url: 'http://127.0.0.1:9/',
    enabled: true,
    event_types: [],
    source_ids: [],
    batch_size: 100,
    headers: {},
    secret: 'whsec_' + Buffer.alloc(32).toString('base64'),
  });
  const cursor = (await store.destinations.state('d'))!.cursor;

  // The classic gap: the earlier transaction takes the smaller sequence number and stays open…
  const slow = await openTransaction(url);
  t.after(() => slow.end());
  await insertEvent(slow, 'early');
  // …while a later one commits.
  assert.equal((await store.commit({ events: [event('late')] })).ok, true);
  const meanwhile = await store.destinations.read(ALL, cursor, 100);
  assert.deepEqual(meanwhile.ids, [], 'nothing is read past a transaction still open');
  assert.ok(meanwhile.next <= cursor || meanwhile.ids.length === 0);
  assert.equal(await store.destinations.count(ALL, cursor), 1, 'pending counts what is committed');
  await slow.query('COMMIT');
  const after = await store.destinations.read(ALL, meanwhile.next, 100);
  assert.deepEqual(after.ids, ['early', 'late']);

  // The other way round: a transaction that began first but writes its event last.
  const first = await openTransaction(url);
  t.after(() => first.end());
  await first.query('SELECT pg_current_xact_id()');
  assert.equal((await store.commit({ events: [event('second')] })).ok, true);
  await insertEvent(first, 'first');
  const held = await store.destinations.read(ALL, after.next, 100);
  assert.deepEqual(held.ids, []);
  await first.query('COMMIT');
  assert.deepEqual((await store.destinations.read(ALL, held.next, 100)).ids, ['first', 'second']);
});

test('delivery through the app waits for the open transaction and then sends both, in order', async (t) => {
  const url = await testSchema();
  const receiver = await startReceiver();
  const service = await startService({ databaseUrl: url });
  t.after(async () => {
    await service.close();
    await receiver.close();
  });
  await service.createSource({ id: 'src-1' });
  await service.manage('POST', '/destination', { id: 'd', url: receiver.url });
  await service.app.ready();
  const slow = await openTransaction(url);
  t.after(() => slow.end());
  await insertEvent(slow, 'held-back');
  const res = await service.post('/track', {
    source: { id: 'src-1' },
    session: { id: 's' },
    options: { debugger: true },
    events: [{ type: 'a' }],
  });
  const tracked = res.json().debugging.events.ids as string[];
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.deepEqual(receiver.deliveredIds(), [], 'the later event waits');
  await slow.query('COMMIT');
  await until(() => receiver.deliveredIds().length === 2, 'both delivered');
  assert.deepEqual(receiver.deliveredIds(), ['held-back', ...tracked]);
});

test('the delivery read and count are served by the (xid, seq) index', async (t) => {
  const url = await testSchema();
  await openedStore(t, url);
  const client = new pg.Client(url);
  await client.connect();
  t.after(() => client.end());
  await client.query('SET enable_seqscan = off; SET enable_bitmapscan = off');
  const plan = (
    await client.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN SELECT id FROM events WHERE xid IS NOT NULL AND (xid, seq) >= ('5'::xid8, 3::bigint)
        AND xid < '9'::xid8 ORDER BY xid, seq LIMIT 100`,
    )
  ).rows
    .map((r) => r['QUERY PLAN'])
    .join('\n');
  assert.match(plan, /Index (Only )?Scan using events_delivery/);
  assert.doesNotMatch(plan, /Sort/);
});
