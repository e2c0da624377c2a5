import assert from 'node:assert/strict';
import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { Checkpointer } from '../../src/storage/sqlite/checkpointer.js';
import { tempDir } from '../helpers.js';

/** A database in WAL mode whose own connection never checkpoints, as the writer thread's. */
function writerDb(t: { after: (fn: () => void) => void }) {
  const dir = tempDir();
  const file = join(dir, 'x.db');
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('wal_autocheckpoint = 0');
  db.exec('CREATE TABLE t (v TEXT)');
  t.after(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { db, file };
}

/** Polls `due()` until it names a checkpoint (the thread has reported), for at most 5 s. */
async function nextDue(checkpointer: Checkpointer) {
  for (let i = 0; i < 500; i++) {
    const mode = checkpointer.due();
    if (mode) return mode;
    await sleep(10);
  }
  return null;
}

test('under continuous writes the log starts again without the writer waiting for a long checkpoint', async (t) => {
  const { db, file } = writerDb(t);
  // Cut back to nothing when it starts again: a shrinking file shows each restart.
  db.pragma('journal_size_limit = 0');
  const checkpointer = new Checkpointer(file, 1024 * 1024 * 1024, { intervalMs: 50 });
  t.after(() => checkpointer.close());
  const insert = db.prepare('INSERT INTO t VALUES (?)');
  const commit = db.transaction(() => {
    for (let i = 0; i < 20; i++) insert.run('x'.repeat(1000));
  });
  const modes = new Set<string>();
  let commits = 0;
  let largest = 0;
  let restarts = 0;
  const until = Date.now() + 3000;
  while (Date.now() < until && restarts < 3) {
    commit();
    commits++;
    const size = statSync(`${file}-wal`).size;
    if (size < largest) restarts++;
    largest = size < largest ? 0 : size;
    // As the writer thread does after each commit.
    const mode = checkpointer.due();
    if (mode) {
      modes.add(mode);
      db.pragma(`wal_checkpoint(${mode})`);
    }
    await new Promise((resolve) => setImmediate(resolve)); // the thread's reports arrive
  }
  assert.ok(restarts >= 3, `the log started again ${restarts} times in 3 s of writes`);
  assert.deepEqual([...modes], ['PASSIVE'], 'the writer only ever copied the last few commits');
  assert.equal(db.prepare('SELECT count(*) FROM t').pluck().get(), commits * 20, 'no row lost');
});

test('the backstop: a log longer than the bound is restarted by the writer, once per report', async (t) => {
  const { db, file } = writerDb(t);
  const reader = new Database(file, { readonly: true });
  const insert = db.prepare('INSERT INTO t VALUES (?)');
  insert.run('x'.repeat(10_000));
  // A reader in the middle of a read keeps the log from starting again.
  reader.exec('BEGIN');
  reader.prepare('SELECT count(*) FROM t').get();
  insert.run('x'.repeat(10_000));
  const checkpointer = new Checkpointer(file, 1024, { intervalMs: 10 });
  t.after(async () => {
    await checkpointer.close();
    reader.close();
  });
  assert.equal(await nextDue(checkpointer), 'RESTART', 'a log over the bound asks for a restart');
  assert.equal(checkpointer.due(), null, 'nothing more before the next report');
  const roomy = new Checkpointer(file, 1024 * 1024 * 1024, { intervalMs: 10 });
  t.after(() => roomy.close());
  assert.equal(await nextDue(roomy), 'PASSIVE', 'a log under the bound: only the last commits');
});

test('a checkpointer whose thread ends says so; one closed does not', async (t) => {
  const dir = tempDir();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const stopped = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), 5000);
    const onStopped = () => {
      clearTimeout(timer);
      resolve(true);
    };
    new Checkpointer(join(dir, 'missing', 'x.db'), 1024, { onStopped });
  });
  assert.equal(stopped, true, 'a thread that cannot open its database reports that it stopped');

  const { file } = writerDb(t);
  let called = false;
  const checkpointer = new Checkpointer(file, 1024, { onStopped: () => (called = true) });
  await checkpointer.close();
  await sleep(50);
  assert.equal(called, false);
});

test('a checkpointer whose thread ended on its own (its database gone) closes at once', async () => {
  let stopped = false;
  const checkpointer = new Checkpointer(join(tempDir(), 'missing', 'collector.db'), 1024, {
    onStopped: () => (stopped = true),
  });
  for (let i = 0; i < 100 && !stopped; i++) await sleep(50);
  assert.ok(stopped, 'the thread could not open the database and ended');
  await checkpointer.close(); // used to wait for an answer forever
});
