/** The store of the service under test: the embedded store in a fresh temporary data folder. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ServiceStore {
  /** The service's settings for this store. */
  env: Record<string, string>;
  /** The service's data folder (temporary). */
  dataDir: string;
  /** Removes what the run made (the data folder unless `keepData`). */
  close(keepData: boolean): Promise<void>;
  /** Removes the data folder at once (on a signal). */
  removeData(): void;
}

export function openStore(): ServiceStore {
  const dataDir = mkdtempSync(join(tmpdir(), 'collector-bench-'));
  const removeData = () => rmSync(dataDir, { recursive: true, force: true });
  return {
    // Unset, the service would take DATABASE_URL and TRACK_WORKERS from the bench's own environment.
    env: { TRACK_DATA_DIR: dataDir, DATABASE_URL: '', TRACK_WORKERS: '' },
    dataDir,
    async close(keepData) {
      if (!keepData) removeData();
      else console.log(`data folder kept: ${dataDir}`);
    },
    removeData,
  };
}
