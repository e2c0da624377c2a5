/** PostgreSQL and driver errors as the store reports them. */
import pg from 'pg';
import { StoreUnavailableError } from '../store.js';

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

/** The driver error behind a StoreUnavailableError. */
export function causeOf(error: unknown): unknown {
  return error instanceof StoreUnavailableError ? error.cause : error;
}
