/** The embedded store's connection to its file: the writer's settings and the schema migrations. */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import type Database from 'better-sqlite3';
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
