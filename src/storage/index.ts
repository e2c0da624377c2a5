import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Config } from '../config.js';
import { migrate } from './postgres/migrations.js';
import { PostgresStore } from './postgres/store.js';
import { backupFile, lockDataDir } from './sqlite/connection.js';
import { SqliteStore } from './sqlite/store.js';
import type { Store } from './store.js';

/** Builds the store the configuration selects: PostgreSQL with DATABASE_URL, else the embedded one. */
export function createStore(config: Config): Store {
  if (config.databaseUrl !== undefined) {
    // open() applies missing migrations unless TRACK_PG_MIGRATE=no; `npm run migrate` applies
    // them ahead of a deployment.
    return new PostgresStore({
      url: config.databaseUrl,
      writeQueueLimit: config.writeQueueLimit,
      poolSize: config.pgPoolSize,
      migrateOnStart: config.pgMigrate,
      listen: config.pgNotify,
    });
  }
  return new SqliteStore({
    dataDir: config.dataDir,
    sync: config.sync,
    writeQueueLimit: config.writeQueueLimit,
  });
}

/**
 * Takes what the configured store needs to be used by this process alone: with the embedded store,
 * the lock of its data folder (DataDirInUseError when another process holds it). Several processes
 * may share a PostgreSQL database, so nothing is taken then. Returns the function that releases it.
 */
export function claimStorage(config: Config): () => void {
  if (config.databaseUrl !== undefined) return () => undefined;
  return lockDataDir(config.dataDir);
}

/**
 * Applies the schema migrations the configured store lacks, and answers what was done. The embedded
 * store takes its data folder's lock for that (so not while the service runs on it); PostgreSQL
 * migrations are safe while collectors start (an advisory lock).
 */
export async function migrateStorage(config: Config): Promise<string> {
  if (config.databaseUrl !== undefined) {
    const { applied, version } = await migrate({
      url: config.databaseUrl,
      connectTimeoutMs: 10_000,
      statementTimeoutMs: 0,
    });
    return applied.length > 0
      ? `applied migrations ${applied.join(', ')}; the database is at version ${version}`
      : `nothing to apply; the database is at version ${version}`;
  }
  const release = lockDataDir(config.dataDir);
  try {
    const store = createStore(config);
    await store.open();
    await store.close();
  } finally {
    release();
  }
  return `the embedded store in ${config.dataDir} is up to date`;
}

/** Why a backup cannot be made here: the message for the operator. */
export class BackupRefused extends Error {}

/**
 * Writes a consistent copy of the embedded store to `file` while the service may be running
 * (docs/api.md#backup). PostgreSQL is backed up with its own tools (pg_dump).
 */
export async function backupStorage(config: Config, file: string): Promise<string> {
  if (config.databaseUrl !== undefined) {
    throw new BackupRefused(
      'with DATABASE_URL the data is in PostgreSQL: back it up with pg_dump (see the README)',
    );
  }
  const source = join(config.dataDir, 'collector.db');
  if (!existsSync(source))
    throw new BackupRefused(`there is no embedded store to back up: ${source} does not exist`);
  const destination = resolve(file);
  if (existsSync(destination)) throw new BackupRefused(`${destination} already exists: choose a new file`);
  const { pages } = await backupFile(source, destination);
  return `backup of ${source} written to ${destination} (${pages} pages, checked)`;
}

export type { Store } from './store.js';
