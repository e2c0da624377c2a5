/** SQLite errors as the store reports them, on either side of the writer thread. */
import { StoreUnavailableError } from '../store.js';

/** An error as it crosses threads. */
export interface ErrorShape {
  message: string;
  code?: string;
}

export function errorShape(error: unknown): ErrorShape {
  const code = (error as { code?: unknown }).code;
  return {
    message: error instanceof Error ? error.message : String(error),
    ...(typeof code === 'string' ? { code } : {}),
  };
}

const UNAVAILABLE_CODES = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|READONLY|CORRUPT|NOTADB)/;

/** The store's view of a SQLite error: unavailable (503) for what a retry may cure, else as it is. */
export function translate(error: unknown): unknown {
  // better-sqlite3 throws a TypeError on a closed connection: the store cannot be reached.
  if (error instanceof TypeError && /database connection is not open/i.test(error.message)) {
    return new StoreUnavailableError(error.message);
  }
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && UNAVAILABLE_CODES.test(code)) {
    return new StoreUnavailableError(`${code}: ${(error as Error).message}`);
  }
  return error;
}

/** An error that came back from the writer thread, translated like one thrown here. */
export function fromShape(shape: ErrorShape): unknown {
  return translate(Object.assign(new Error(shape.message), shape.code ? { code: shape.code } : {}));
}
