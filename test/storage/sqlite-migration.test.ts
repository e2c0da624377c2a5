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
  assert.deepEqual(await store.eraseProfile('p1'), {
    profiles: 1,
    sessions: 1,
    events: 2,
    identities: 0,
    aliases: 0,
    rejected: 0,
  });
  assert.deepEqual(await ids({}, 10, null), ['e3', 'e4']);
  assert.equal(await store.getEvent('e1'), null);
});
