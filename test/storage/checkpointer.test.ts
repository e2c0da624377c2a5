import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { Checkpointer } from '../../src/storage/sqlite/checkpointer.js';
import { tempDir } from '../helpers.js';

test('the write-ahead log backstop: past the size bound, looked at no more than once a second', async (t) => {
  const dir = tempDir();
  const file = join(dir, 'x.db');
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('wal_autocheckpoint = 0');
  db.exec('CREATE TABLE t (v TEXT)');
  db.prepare('INSERT INTO t VALUES (?)').run('x'.repeat(10_000));
  const checkpointer = new Checkpointer(file, 1024, 60_000); // rounds far apart: the log stays
  t.after(async () => {
    await checkpointer.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  assert.equal(checkpointer.walTooLarge(0), true, 'a log over the bound is reported');
  assert.equal(checkpointer.walTooLarge(999), false, 'not looked at again within the second');
  assert.equal(checkpointer.walTooLarge(1000), true, 'looked at again after it');
  const roomy = new Checkpointer(file, 1024 * 1024 * 1024, 60_000);
  t.after(() => roomy.close());
  assert.equal(roomy.walTooLarge(0), false, 'a log under the bound is not');
});
