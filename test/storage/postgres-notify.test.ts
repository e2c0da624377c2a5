/** Change notifications of the PostgreSQL store (LISTEN/NOTIFY), as caches of other processes use them. */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { EventSource, EventTypeRecord, ProfileRule } from '../../src/model/records.js';
import { sourceFromInput } from '../../src/domain/sources.js';
import { PostgresStore } from '../../src/storage/postgres/store.js';
import type { StoreChange } from '../../src/storage/store.js';
import { testSchema, usePostgres, openedStore } from '../support/postgres.js';
import { TcpProxy } from '../support/tcp-proxy.js';

usePostgres();

const source = (id: string, enabled = true): EventSource => ({
  ...sourceFromInput({ id, name: id }),
  enabled,
});

const eventType = (type: string): EventTypeRecord => ({
  event_type: type,
  name: type,
  description: '',
  tags: [],
  validation: { enabled: true, json_schema: { 'event@properties': { type: 'object' } } },
});

const rule = (id: string, eventType = 'purchase'): ProfileRule => ({
  id,
  name: id,
  enabled: true,
  event_type: eventType,
  source_id: null,
  operations: [{ op: 'increment', path: 'traits.public.n' }],
});

const EVERYTHING: StoreChange[] = [
  { kind: 'source', id: null },
  { kind: 'event_type', id: null },
  { kind: 'profile_rule', id: null },
  { kind: 'destination', id: null },
];

/** Polls `condition` every 20 ms for at most `ms` (generous: the machine may be loaded). */
async function until(condition: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Subscribes and waits until the LISTEN connection is up (it first reports "everything may have changed"). */
async function watching(t: TestContext, store: PostgresStore): Promise<StoreChange[]> {
  const changes: StoreChange[] = [];
  const unsubscribe = store.watchChanges((change) => changes.push(change));
  t.after(unsubscribe);
  await until(() => changes.length >= EVERYTHING.length, 'the LISTEN connection');
  assert.deepEqual(changes.splice(0), EVERYTHING);
  assert.equal(store.listening, true);
  return changes;
}

test('changes of sources and event types made by another store arrive with their ids; other schemas are ignored', async (t) => {
  const url = await testSchema();
  const [a, b] = [await openedStore(t, url), await openedStore(t, url)];
  const elsewhere = await openedStore(t, await testSchema());
  const changes = await watching(t, b);

  await elsewhere.putSource(source('other-schema'));
  await a.putSource(source('web'));
  await a.putSource(source('web', false));
  assert.equal(await a.deleteSource('web'), true);
  assert.equal(await a.deleteSource('web'), false); // nothing deleted: nothing announced
  await a.putEventType(eventType('purchase'));
  assert.equal(await a.deleteEventType('purchase'), true);
  assert.equal(await a.deleteEventType('purchase'), false);
  // A rule announces the event type whose rules changed: both types when it moves to another.
  assert.equal(await a.putProfileRule(rule('r1')), null);
  assert.equal(await a.putProfileRule(rule('r1', 'sign-up')), 'purchase');
  assert.equal(await a.deleteProfileRule('r1'), 'sign-up');
  assert.equal(await a.deleteProfileRule('r1'), null);
  await b.putSource(source('own')); // a store hears its own changes too
  const hook = { id: 'hook', name: '', url: 'http://127.0.0.1:9/', enabled: true, event_types: [] };
  await a.destinations.put({ ...hook, source_ids: [], batch_size: 1, headers: {}, secret: 'whsec_AAAA' });
  assert.equal(await a.destinations.delete('hook'), true);
  assert.equal(await a.destinations.delete('hook'), false);
  const expected: StoreChange[] = [
    { kind: 'source', id: 'web' },
    { kind: 'source', id: 'web' },
    { kind: 'source', id: 'web' },
    { kind: 'event_type', id: 'purchase' },
    { kind: 'event_type', id: 'purchase' },
    { kind: 'profile_rule', id: 'purchase' },
    { kind: 'profile_rule', id: 'purchase' },
    { kind: 'profile_rule', id: 'sign-up' },
    { kind: 'profile_rule', id: 'sign-up' },
    { kind: 'source', id: 'own' },
    { kind: 'destination', id: 'hook' },
    { kind: 'destination', id: 'hook' },
  ];
  await until(() => changes.length >= expected.length, 'the notifications');
  await new Promise((resolve) => setTimeout(resolve, 200));
  const sorted = (list: StoreChange[]) =>
    [...list].sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)));
  // Within one statement the order of two announcements is not fixed (the moved rule's two types).
  assert.deepEqual(changes.slice(0, 5), expected.slice(0, 5));
  assert.deepEqual(sorted(changes.slice(5, 7)), sorted(expected.slice(5, 7)));
  assert.deepEqual(changes.slice(7), expected.slice(7));
  // The writes themselves are unchanged by the announcement.
  assert.deepEqual(await b.getSource('own'), source('own'));
  assert.equal(await b.getSource('web'), null);
});

test('ids that cannot be told apart after storage (U+0000) announce the whole kind', async (t) => {
  const url = await testSchema();
  const a = await openedStore(t, url);
  const changes = await watching(t, a);
  await a.putSource(source('nul\u0000id'));
  await a.putEventType(eventType('type\u0000x'));
  await a.putProfileRule({ ...rule('r'), event_type: 'type\u0000x' });
  await until(() => changes.length >= 3, 'the notifications');
  assert.deepEqual(changes, EVERYTHING.slice(0, 3));
  assert.equal((await a.getSource('nul\u0000id'))?.id, 'nul\u0000id');
});

test('a failed write announces nothing', async (t) => {
  const url = await testSchema();
  const a = await openedStore(t, url);
  const changes = await watching(t, a);
  // No event_type: the primary key refuses NULL and the statement fails as a whole.
  await assert.rejects(a.putEventType({ ...eventType('x'), event_type: undefined as unknown as string }));
  await a.putSource(source('after'));
  await until(() => changes.length >= 1, 'the notification');
  assert.deepEqual(changes, [{ kind: 'source', id: 'after' }]);
});

test('a lost LISTEN connection comes back by itself and reports that anything may have changed', async (t) => {
  const direct = await testSchema();
  const { proxy, url } = await TcpProxy.in(direct);
  t.after(() => proxy.close());
  const writer = await openedStore(t, direct);
  const reader = await openedStore(t, url, { connectTimeoutMs: 1000 });
  const changes = await watching(t, reader);

  await proxy.down();
  await until(() => !reader.listening, 'the lost connection');
  await writer.putSource(source('changed-while-down')); // announced to nobody
  await proxy.up();
  await until(() => changes.length >= EVERYTHING.length, 'the reconnection', 20_000);
  assert.deepEqual(changes.splice(0, EVERYTHING.length), EVERYTHING);
  assert.equal(reader.listening, true);

  await writer.putEventType(eventType('after-reconnect'));
  await until(() => changes.length >= 1, 'a notification after the reconnection');
  assert.deepEqual(changes, [{ kind: 'event_type', id: 'after-reconnect' }]);
});

test('unsubscribing, closing, or listen: false deliver nothing', async (t) => {
  const url = await testSchema();
  const writer = await openedStore(t, url);
  const quiet = await openedStore(t, url, { listen: false });
  const heard: StoreChange[] = [];
  quiet.watchChanges((change) => heard.push(change));

  const gone = await openedStore(t, url);
  const goneChanges: StoreChange[] = [];
  const unsubscribe = gone.watchChanges((change) => goneChanges.push(change));
  await until(() => gone.listening, 'the LISTEN connection');
  unsubscribe();
  await until(() => !gone.listening, 'the unsubscription');

  const closed = new PostgresStore({ url, writeQueueLimit: 10 });
  await closed.open();
  const closedChanges: StoreChange[] = [];
  closed.watchChanges((change) => closedChanges.push(change));
  await until(() => closed.listening, 'the LISTEN connection');
  await closed.close();
  assert.equal(closed.listening, false);
  closedChanges.length = 0;

  // A store that listens, to know when the announcement has been delivered.
  const witness = await watching(t, await openedStore(t, url));
  await writer.putSource(source('s'));
  await until(() => witness.length >= 1, 'the witness');
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.deepEqual(heard, []);
  assert.deepEqual(
    goneChanges.filter((c) => c.id !== null),
    [],
  );
  assert.deepEqual(closedChanges, []);
  assert.equal(quiet.listening, false);
});
