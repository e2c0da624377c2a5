import type { Config } from '../config.js';
import { ConfigError } from '../config.js';
import { SqliteStore } from './sqlite/store.js';
import type { Store } from './store.js';

/** Builds the store the configuration selects: PostgreSQL with DATABASE_URL, else the embedded one. */
export function createStore(config: Config): Store {
  if (config.databaseUrl !== undefined) {
    throw new ConfigError('DATABASE_URL is set, but this build has only the embedded store; unset it');
  }
  return new SqliteStore({
    dataDir: config.dataDir,
    sync: config.sync,
    writeQueueLimit: config.writeQueueLimit,
  });
}

export type { Store } from './store.js';
