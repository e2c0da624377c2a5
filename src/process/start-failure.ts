import type { Config } from '../config.js';
import { ConfigError } from '../config.js';
import { BackupRefused } from '../storage/index.js';
import { DataDirInUseError, MigrationsMissingError, StoreUnavailableError } from '../storage/store.js';

/** A connection string without its password, to name the database in a message. */
export function safeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const user = parsed.username ? `${parsed.username}@` : '';
    return `${parsed.protocol}//${user}${parsed.host}${parsed.pathname}`;
  } catch {
    return 'DATABASE_URL';
  }
}

/**
 * The one line written to standard error when the service cannot start or a command fails
 * (docs/api.md#starting-and-stopping), or null for a fault of the program, which is written whole.
 */
export function startFailure(error: unknown, config: Config | undefined): string | null {
  if (error instanceof ConfigError) return `configuration error: ${error.message}`;
  if (error instanceof MigrationsMissingError) {
    return `configuration error: ${error.message} and TRACK_PG_MIGRATE=no: run \`npm run migrate\` with this DATABASE_URL first`;
  }
  if (error instanceof DataDirInUseError) return `cannot start: ${error.message}`;
  if (error instanceof BackupRefused) return `cannot back up: ${error.message}`;
  if (error instanceof StoreUnavailableError) {
    if (config?.databaseUrl !== undefined) {
      return `cannot start: the database ${safeUrl(config.databaseUrl)} cannot be reached or used (${error.message})`;
    }
    return `cannot start: the embedded store in ${config?.dataDir ?? 'TRACK_DATA_DIR'} cannot be used (${error.message})`;
  }
  const code = (error as NodeJS.ErrnoException | null)?.code;
  const where = config ? `${config.host}:${config.port}` : 'the address';
  if (code === 'EADDRINUSE') {
    return `cannot start: ${where} is already in use by another process (choose another PORT, or stop it)`;
  }
  if (code === 'EACCES' && (error as { syscall?: string }).syscall === 'listen') {
    return `cannot start: no permission to listen on ${where} (ports below 1024 need privileges: choose another PORT)`;
  }
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
    return `cannot start: cannot listen on ${where}: HOST is not an address of this machine`;
  }
  if (typeof code === 'string' && error instanceof Error && (error as { path?: string }).path) {
    return `cannot start: ${error.message}`; // the data folder: permissions, full or read-only disk
  }
  return null;
}
