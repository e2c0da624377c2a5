import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, type Config } from './config.js';

/**
 * The management API token: TRACK_API_TOKEN when set; otherwise one random token created once and
 * kept in `$TRACK_DATA_DIR/api-token` (mode 0600), so it survives restarts.
 */
export function resolveApiToken(config: Config): { token: string; file: string | null } {
  if (config.apiToken !== undefined) return { token: config.apiToken, file: null };
  const file = join(config.dataDir, 'api-token');
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  try {
    writeFileSync(file, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const token = readFileSync(file, 'utf8').trim();
  if (token === '') throw new ConfigError(`${file} is empty: delete it to have a new token generated`);
  return { token, file };
}
