/**
 * The embedded store's connection to its files: the writer's settings, the schema migrations, the
 * private files of the data folder, its lock and the online backup.
 */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, renameSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { DataDirInUseError } from '../store.js';
import { migrations } from './migrations.js';

/** Log size past which the writer checkpoints itself (RESTART), when the checkpointer falls behind. */
export const WAL_LIMIT_BYTES = 128 * 1024 * 1024;

/** The settings of the one connection that writes (the writer thread's, and the write-path bench's). */
export function configureWriter(db: Database.Database, sync: 'normal' | 'full'): void {
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${sync === 'full' ? 'FULL' : 'NORMAL'}`);
  db.pragma('busy_timeout = 5000');
  db.pragma('temp_store = MEMORY');
  // The log is copied back into the database file by a thread of its own (checkpointer.ts), so that
  // commits never wait for that copy and its fsync.
  db.pragma('wal_autocheckpoint = 0');
  // When the log starts again from its beginning, the file is cut back to this size only: keeping it
  // at its working size lets the next round overwrite blocks the file system has already allocated.
  // Cut back to 64 MB, every round allocated them again: 7-11% fewer 1-event requests/s in three
  // alternating pairs of 15 s runs.
  db.pragma(`journal_size_limit = ${4 * WAL_LIMIT_BYTES}`);
}

/** Applies the migrations the file lacks; `PRAGMA user_version` counts those applied. */
export function migrate(db: Database.Database): void {
  const applied = db.pragma('user_version', { simple: true }) as number;
  for (let i = applied; i < migrations.length; i++) {
    db.transaction(() => {
      db.exec(migrations[i]!);
      db.pragma(`user_version = ${i + 1}`);
    })();
  }
}

/**
 * The data folder and the database file, readable by this user only (folder 0700, files 0600):
 * they hold every visitor's data. SQLite gives the log and shared-memory files the database file's
 * mode. Files made by earlier versions with wider modes are narrowed.
 */
export function preparePrivateFiles(dataDir: string, file: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if (!existsSync(file)) closeSync(openSync(file, 'a', 0o600));
  for (const path of [file, `${file}-wal`, `${file}-shm`]) {
    if (existsSync(path)) chmodSync(path, 0o600);
  }
}

/**
 * Keeps other processes off the data folder for as long as this one runs: an exclusive lock on the
 * file `collector.lock`, taken through SQLite (a lock of the operating system, released when the
 * process ends however it ends). Throws DataDirInUseError when another process holds it.
 * Returns the function that releases it.
 */
export function lockDataDir(dataDir: string): () => void {
  const folder = resolve(dataDir);
  const file = join(dataDir, 'collector.lock');
  preparePrivateFiles(dataDir, file);
  const db = new Database(file, { timeout: 0 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    // The first write takes the exclusive lock; in this mode it is kept until the connection closes.
    db.exec('CREATE TABLE IF NOT EXISTS holder (pid INTEGER); DELETE FROM holder;');
    db.prepare('INSERT INTO holder (pid) VALUES (?)').run(process.pid);
  } catch (error) {
    db.close();
    if ((error as { code?: string }).code?.startsWith('SQLITE_BUSY')) throw new DataDirInUseError(dataDir);
    throw error;
  }
  locked.set(folder, (locked.get(folder) ?? 0) + 1);
  return () => {
    db.close();
    const count = (locked.get(folder) ?? 1) - 1;
    if (count > 0) locked.set(folder, count);
    else locked.delete(folder);
  };
}

/** The data folders whose lock this process holds, with how many times it took it. */
const locked = new Map<string, number>();

/**
 * True while this process holds the lock of the data folder (lockDataDir): no other process can
 * write its store then, so what the store remembers of it stays true (the session cache).
 */
export function holdsDataDirLock(dataDir: string): boolean {
  return locked.has(resolve(dataDir));
}

/**
 * Copies the database file `source` to `destination` while other processes write to it (SQLite's
 * online backup, all pages in one step: a consistent copy of the last commit before the step),
 * then checks the copy. The copy is written beside `destination` and renamed into place once whole.
 */
export async function backupFile(source: string, destination: string): Promise<{ pages: number }> {
  const db = new Database(source, { readonly: true, fileMustExist: true, timeout: 5000 });
  const partial = `${destination}.partial`;
  try {
    rmSync(partial, { force: true });
    const progress = await db.backup(partial, { progress: () => 0x7fffffff });
    const copy = new Database(partial, { readonly: true });
    try {
      const check = copy.pragma('quick_check', { simple: true });
      if (check !== 'ok') throw new Error(`the copy failed its check: ${String(check)}`);
    } finally {
      copy.close();
    }
    chmodSync(partial, 0o600); // as private as the store it copies
    renameSync(partial, destination);
    return { pages: progress.totalPages };
  } finally {
    db.close();
    rmSync(partial, { force: true });
  }
}
