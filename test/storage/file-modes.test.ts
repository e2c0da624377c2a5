/** The embedded store's files hold every visitor's data: readable by the service's user only. */
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { payload, startService, tempDir } from '../helpers.js';

const mode = (path: string) => statSync(path).mode & 0o777;

test('the data folder is 0700 and the store files 0600, also when an older version made them wider', async (t) => {
  const parent = tempDir();
  const dataDir = join(parent, 'data');
  const service = await startService({ dataDir });
  t.after(() => service.close());
  await service.createSource();
  assert.equal((await service.post('/track', payload())).statusCode, 200);
  assert.equal(mode(dataDir), 0o700);
  for (const file of ['collector.db', 'collector.db-wal', 'collector.db-shm']) {
    assert.equal(mode(join(dataDir, file)), 0o600, file);
  }

  const older = join(parent, 'older');
  mkdirSync(older);
  writeFileSync(join(older, 'collector.db'), '');
  chmodSync(join(older, 'collector.db'), 0o644);
  const again = await startService({ dataDir: older });
  t.after(async () => {
    await again.close();
    rmSync(parent, { recursive: true, force: true });
  });
  assert.equal(mode(join(older, 'collector.db')), 0o600);
});
