/** Connections to PostgreSQL: the settings every client uses, the pool, and transactions on it. */
import pg from 'pg';
import { isConnectionLost } from './errors.js';

export interface ConnectionOptions {
  /** `postgres://…` connection string. */
  url: string;
  /** Longest wait for a new connection, or for a free one of the pool. */
  connectTimeoutMs: number;
  /** Longest run of one statement (server side); the client gives up a little later. */
  statementTimeoutMs: number;
}

export interface PoolOptions extends ConnectionOptions {
  /** Most connections this process opens. */
  max: number;
}

/** Settings shared by the pool and the migration client. */
export function clientConfig(options: ConnectionOptions): pg.ClientConfig {
  return {
    connectionString: options.url,
    connectionTimeoutMillis: options.connectTimeoutMs,
    statement_timeout: options.statementTimeoutMs,
    // The server ends a transaction left open by a lost client instead of keeping its locks.
    idle_in_transaction_session_timeout: Math.max(60_000, options.statementTimeoutMs * 2),
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    application_name: 'event-collector',
  };
}

const ignore = () => undefined;

/**
 * A connection pool that recovers by itself: broken connections (server restart, network cut) are
 * dropped by the pool and replaced on the next use, and their errors never reach the process.
 */
export function createPool(options: PoolOptions): pg.Pool {
  const pool = new pg.Pool({
    ...clientConfig(options),
    // A statement whose answer never arrives (server gone without a word) fails on the client too.
    query_timeout: options.statementTimeoutMs + 5_000,
    max: options.max,
    idleTimeoutMillis: 30_000,
    // Statements queued on one connection are sent without waiting for the answers before them.
    pipeline: true,
  });
  // An idle connection that breaks is removed by the pool; without a listener its error would end the process.
  pool.on('error', ignore);
  // A checked-out connection may break between two statements; its next statement reports it.
  pool.on('connect', (client) => client.on('error', ignore));
  return pool;
}

/**
 * Runs `fn` on one connection of the pool outside any transaction: each statement commits on its
 * own. A connection that failed (its error, or one `fn` hands to `discard`) is destroyed instead of
 * going back to the pool.
 */
export async function onConnection<T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient, discard: (error: unknown) => void) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken: unknown = undefined;
  const discard = (error: unknown) => {
    broken ??= error;
  };
  try {
    return await fn(client, discard);
  } catch (error) {
    if (isConnectionLost(error)) discard(error);
    throw error;
  } finally {
    client.release(broken === undefined ? undefined : (broken as Error));
  }
}

/**
 * Runs `fn` on one connection of the pool inside a transaction: commits when it returns, rolls back
 * when it throws. A connection that failed is destroyed instead of going back to the pool.
 */
export function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return onConnection(pool, async (client, discard) => {
    await client.query('BEGIN');
    try {
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      if (!isConnectionLost(error)) await client.query('ROLLBACK').catch(discard);
      throw error;
    }
  });
}
