import type { Config } from '../config.js';
import { PostgresStore } from './postgres/store.js';
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

export type { Store } from './store.js';
