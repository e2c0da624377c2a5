import { rmSync } from 'node:fs';
import { after } from 'node:test';
import { lockDataDir } from '../../src/storage/sqlite/connection.js';
import { SqliteStore } from '../../src/storage/sqlite/store.js';
import { tempDir } from '../helpers.js';
import { storeContract } from './contract.js';

const dirs: string[] = [];
const locks: (() => void)[] = [];
after(() => {
  for (const release of locks) release();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

// With the data folder's lock, as the service runs: the store then keeps its session cache and holds
// profile changes (src/storage/sqlite/held-profiles.ts), and the contract holds for both.
storeContract('sqlite', async ({ writeQueueLimit }) => {
  const dataDir = tempDir('collector-store-');
  dirs.push(dataDir);
  locks.push(lockDataDir(dataDir));
  const make = () => new SqliteStore({ dataDir, sync: 'normal', writeQueueLimit });
  return { store: make(), again: make };
});
