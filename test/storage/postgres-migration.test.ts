/** A PostgreSQL store written before client ids and event times is upgraded without losing events. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { newProfile } from '../../src/model/profiles.js';
import { migrations } from '../../src/storage/postgres/migrations.js';
import { openedStore, testSchema, usePostgres } from '../support/postgres.js';
import { at, event, session } from './contract.js';

usePostgres();

test('events stored before migration of client ids are read whole, listed by time, and new rules apply', async (t) => {
  const url = await testSchema();
  const previous = migrations.findIndex((sql) => sql.includes('events_client_id'));
  assert.ok(previous > 0);
  const legacy = (id: string, type: string, insert: string) => ({
    id,
    type,
    properties: { n: 1 },
    context: {},
    source: { id: 'src-1' },
    session: { id: 's1' },
    profile: { id: 'p1' },
    metadata: { time: { insert }, ip: '127.0.0.1', status: 'collected', profile_less: false },
  });
  const docs = [
    legacy('o1', 'view', at(1000)),
    legacy('o2', 'buy', at(1000)),
    legacy('o3', 'view', at(9000)),
  ];
  const client = new pg.Client(url);
  await client.connect();
  try {
    await client.query(
      'CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    for (let i = 0; i < previous; i++) {
      await client.query(migrations[i]!);
      await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [i + 1]);
    }
    for (const doc of docs) {
      await client.query(
        'INSERT INTO events (id, insert_time, type, source_id, session_id, profile_id, doc) VALUES ($1, $2, $3, $4, $5, $6, $7)',
        [doc.id, doc.metadata.time.insert, doc.type, 'src-1', 's1', 'p1', JSON.stringify(doc)],
      );
    }
    await client.query("INSERT INTO sessions (id, profile_id, version, doc) VALUES ('s1', 'p1', 1, $1)", [
      JSON.stringify(session('s1', 'p1')),
    ]);
    await client.query("INSERT INTO profiles (id, doc) VALUES ('p1', $1)", [
      JSON.stringify(newProfile('p1', at(0))),
    ]);
  } finally {
    await client.end();
  }

  const store = await openedStore(t, url);
  for (const doc of docs) {
    assert.deepEqual(await store.getEvent(doc.id), {
      ...doc,
      metadata: {
        ...doc.metadata,
        time: { insert: doc.metadata.time.insert, create: doc.metadata.time.insert, source: 'server' },
        client_id: null,
      },
    });
  }
  const ids = async (...args: Parameters<typeof store.listEvents>) =>
    (await store.listEvents(...args)).map((e) => e.id);
  assert.deepEqual(await ids({}, 10, null), ['o3', 'o2', 'o1']);
  assert.deepEqual(await ids({ since: at(5000) }, 10, null), ['o3'], 'old events have create = insert');
  assert.deepEqual(await ids({ until: at(5000), type: 'view' }, 10, null), ['o1']);

  const fresh = event('n1', { session: { id: 's1' }, profile: { id: 'p1' } }, at(20_000));
  fresh.metadata.client_id = 'x';
  const first = await store.commit({ events: [fresh] });
  assert.deepEqual(first.ok && first.duplicates, []);
  const again = await store.commit({ events: [{ ...fresh, id: 'n2' }] });
  assert.deepEqual(again.ok && again.duplicates, ['n2']);
  assert.deepEqual(await ids({ clientId: 'x' }, 10, null), ['n1']);
  assert.deepEqual(await store.eraseProfile('p1'), { profiles: 1, sessions: 1, events: 4 });
  const freed = await store.commit({ events: [{ ...fresh, id: 'n3' }] });
  assert.deepEqual(freed.ok && freed.duplicates, [], 'erasing the event freed its client id');
});
