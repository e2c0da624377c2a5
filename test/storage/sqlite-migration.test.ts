/** A database written before events were stored in runs opens with every event in place. */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { newProfile } from '../../src/model/profiles.js';
import { migrations } from '../../src/storage/sqlite/migrations.js';
import { SqliteStore } from '../../src/storage/sqlite/store.js';
import { tempDir } from '../helpers.js';
import { at, event, session } from './contract.js';

test('events stored one per row before migration 3 are found, listed, paged and erased after it', async (t) => {
  const dataDir = tempDir('collector-migration-');
  const old = new Database(join(dataDir, 'collector.db'));
  old.pragma('journal_mode = WAL');
  for (const sql of migrations.slice(0, 2)) old.exec(sql);
  old.pragma('user_version = 2');
  const events = [
    event('e1', { type: 'view', session: { id: 's1' }, profile: { id: 'p1' } }, at(1000)),
    event('e2', { type: 'buy', session: { id: 's1' }, profile: { id: 'p1' } }, at(1000)),
    event('e3', { type: 'view\u0000', session: { id: 's2' }, profile: null }, at(2000)),
    event('e4', { type: 'view', session: null, profile: null, source: { id: 'src-2' } }, at(500)),
  ];
  const insert = old.prepare(
    'INSERT INTO events (id, insert_time, type, source_id, session_id, profile_id, doc) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  for (const e of events)
    insert.run(
      e.id,
      e.metadata.time.insert,
      e.type,
      e.source.id,
      e.session?.id ?? null,
      e.profile?.id ?? null,
      JSON.stringify(e),
    );
  old
    .prepare('INSERT INTO sessions (id, profile_id, version, doc) VALUES (?, ?, 1, ?)')
    .run('s1', 'p1', JSON.stringify(session('s1', 'p1')));
  old
    .prepare('INSERT INTO profiles (id, doc) VALUES (?, ?)')
    .run('p1', JSON.stringify(newProfile('p1', at(0))));
  old.close();

  const store = new SqliteStore({ dataDir, sync: 'normal', writeQueueLimit: 100 });
  await store.open();
  t.after(async () => {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  for (const e of events) assert.deepEqual(await store.getEvent(e.id), e);
  const ids = async (...args: Parameters<SqliteStore['listEvents']>) =>
    (await store.listEvents(...args)).map((e) => e.id);
  assert.deepEqual(await ids({}, 10, null), ['e3', 'e2', 'e1', 'e4']);
  assert.deepEqual(await ids({}, 2, { insert: at(1000), id: 'e2' }), ['e1', 'e4']);
  assert.deepEqual(await ids({ type: 'view' }, 10, null), ['e1', 'e4']);
  assert.deepEqual(await ids({ type: 'view\u0000' }, 10, null), ['e3']);
  assert.deepEqual(await ids({ sessionId: 's1' }, 10, null), ['e2', 'e1']);
  assert.deepEqual(await ids({ sourceId: 'src-2' }, 10, null), ['e4']);
  assert.deepEqual(await store.eraseProfile('p1'), { profiles: 1, sessions: 1, events: 2 });
  assert.deepEqual(await ids({}, 10, null), ['e3', 'e4']);
  assert.equal(await store.getEvent('e1'), null);
});

test('a store written before client ids and event times opens with its events whole; new rules apply to new writes', async (t) => {
  const dataDir = tempDir('collector-migration-');
  const file = join(dataDir, 'collector.db');
  const previous = migrations.findIndex((sql) => sql.includes('CREATE TABLE event_client_ids'));
  assert.ok(previous > 0);
  const old = new Database(file);
  old.pragma('journal_mode = WAL');
  for (const sql of migrations.slice(0, previous)) old.exec(sql);
  old.pragma(`user_version = ${previous}`);
  // Documents as the previous version wrote them: no create time, no time source, no client id.
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
  const insertRun = old.prepare(
    'INSERT INTO event_runs (insert_time, source_id, session_id, session_seq, profile_id, ids, types, docs) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  old
    .prepare('INSERT INTO sessions (id, profile_id, version, doc) VALUES (?, ?, 1, ?)')
    .run('s1', 'p1', JSON.stringify(session('s1', 'p1')));
  old
    .prepare('INSERT INTO profiles (id, doc) VALUES (?, ?)')
    .run('p1', JSON.stringify(newProfile('p1', at(0))));
  insertRun.run(
    at(1000),
    'src-1',
    's1',
    1,
    'p1',
    '["o1","o2"]',
    '["view","buy"]',
    JSON.stringify(docs.slice(0, 2)),
  );
  insertRun.run(at(9000), 'src-1', 's1', 1, 'p1', '["o3"]', '["view"]', JSON.stringify(docs.slice(2)));
  old.close();

  const store = new SqliteStore({ dataDir, sync: 'normal', writeQueueLimit: 100 });
  await store.open();
  t.after(async () => {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const upgraded = (doc: ReturnType<typeof legacy>) => ({
    ...doc,
    metadata: {
      ...doc.metadata,
      time: { insert: doc.metadata.time.insert, create: doc.metadata.time.insert, source: 'server' },
      client_id: null,
    },
  });
  for (const doc of docs) assert.deepEqual(await store.getEvent(doc.id), upgraded(doc));
  const ids = async (...args: Parameters<SqliteStore['listEvents']>) =>
    (await store.listEvents(...args)).map((e) => e.id);
  assert.deepEqual(await ids({}, 10, null), ['o3', 'o2', 'o1']);
  assert.deepEqual(await ids({ since: at(5000) }, 10, null), ['o3'], 'old events have create = insert');
  assert.deepEqual(await ids({ until: at(5000), type: 'view' }, 10, null), ['o1']);
  assert.deepEqual(await ids({ clientId: 'x' }, 10, null), []);

  // New writes: client ids are kept and checked, times stored.
  const fresh = event('n1', { session: { id: 's1' }, profile: { id: 'p1' } }, at(20_000));
  fresh.metadata.client_id = 'x';
  const first = await store.commit({ events: [fresh] });
  assert.deepEqual(first.ok && first.duplicates, []);
  const again = await store.commit({ events: [{ ...fresh, id: 'n2' }] });
  assert.deepEqual(again.ok && again.duplicates, ['n2']);
  assert.deepEqual(await ids({ clientId: 'x' }, 10, null), ['n1']);
  assert.deepEqual(await store.eraseProfile('p1'), { profiles: 1, sessions: 1, events: 4 });
  assert.deepEqual(await ids({}, 10, null), []);
  const freed = await store.commit({ events: [{ ...fresh, id: 'n3' }] });
  assert.deepEqual(freed.ok && freed.duplicates, [], 'erasing the event freed its client id');
});
