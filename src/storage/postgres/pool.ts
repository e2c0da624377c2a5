import pg from 'pg';
import { StoreUnavailableError } from '../store.js';

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

/** SQLSTATE classes and codes that mean "the database cannot serve us now", not "this request is wrong". */
const UNAVAILABLE_CLASSES = new Set(['08', '28', '53', '57', '58']);
const UNAVAILABLE_CODES = new Set(['3D000', '40001', '40P01', '55P03', '55006', '25006']);

/** Messages of the driver and of Node sockets for a connection that cannot be made or was lost. */
const CONNECTION_MESSAGE =
  /connect|connection|terminated|timeout|timed out|not queryable|after calling end|socket|ECONN|EPIPE|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN/i;

/** True when `error` means the database is unreachable, overloaded or shutting down. */
export function isUnavailable(error: unknown): boolean {
  if (error instanceof StoreUnavailableError) return true;
  if (error instanceof pg.DatabaseError) {
    const code = error.code ?? '';
    return UNAVAILABLE_CLASSES.has(code.slice(0, 2)) || UNAVAILABLE_CODES.has(code);
  }
  if (!(error instanceof Error)) return false;
  // A mistake in the program, whatever its message says.
  if (error instanceof TypeError || error instanceof RangeError || error instanceof SyntaxError) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return true; // a system error of the socket
  if (error instanceof AggregateError) return error.errors.some(isUnavailable);
  return CONNECTION_MESSAGE.test(error.message);
}

/** True when a statement failed because of other transactions (deadlock, serialization): worth a retry. */
export function isRetryable(error: unknown): boolean {
  return error instanceof pg.DatabaseError && (error.code === '40P01' || error.code === '40001');
}

/** True when the connection itself is gone, so the transaction on it cannot continue. */
export function isConnectionLost(error: unknown): boolean {
  if (error instanceof pg.DatabaseError) {
    const code = error.code ?? '';
    return code.startsWith('08') || code.startsWith('57P');
  }
  return isUnavailable(error);
}

/** What callers see: StoreUnavailableError for an unreachable database, anything else unchanged. */
export function translate(error: unknown): unknown {
  if (error instanceof StoreUnavailableError || !isUnavailable(error)) return error;
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message || error.name : String(error);
  return new StoreUnavailableError(typeof code === 'string' ? `${code}: ${message}` : message, {
    cause: error,
  });
}

/**
 * Runs `fn` on one connection of the pool inside a transaction: commits when it returns, rolls back
 * when it throws. A connection that failed is destroyed instead of going back to the pool.
 */
export async function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: unknown = undefined;
  try {
    await client.query('BEGIN');
    try {
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      if (isConnectionLost(error)) broken = error;
      else await client.query('ROLLBACK').catch((e: unknown) => (broken = e));
      throw error;
    }
  } catch (error) {
    if (broken === undefined && isConnectionLost(error)) broken = error;
    throw error;
  } finally {
    client.release(broken === undefined ? undefined : (broken as Error));
  }
}
