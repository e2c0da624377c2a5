import { rmSync } from 'node:fs';
import { after } from 'node:test';
import { SqliteStore } from '../../src/storage/sqlite/store.js';
import { tempDir } from '../helpers.js';
import { storeContract } from './contract.js';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

storeContract('sqlite', async ({ writeQueueLimit }) => {
  const dataDir = tempDir('collector-store-');
  dirs.push(dataDir);
  const make = () => new SqliteStore({ dataDir, sync: 'normal', writeQueueLimit });
  return { store: make(), again: make };
});
