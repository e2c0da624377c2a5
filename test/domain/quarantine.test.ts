import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { Quarantine } from '../../src/domain/quarantine.js';
import { ValidationFailed } from '../../src/domain/errors.js';
import { SqliteStore } from '../../src/storage/sqlite/store.js';
import { tempDir } from '../helpers.js';

const rejection = new ValidationFailed([
  { event: 0, type: 't', target: 'event@properties', reason: 'must be object' },
]);
const input = {
  endpoint: 'collect' as const,
  source_id: 's',
  session_id: null,
  event_types: ['t'],
  request: { body: {} },
};

test('retention: records older than the age bound and beyond the count bound are pruned', async (t) => {
  const dataDir = tempDir();
  const store = new SqliteStore({ dataDir, sync: 'normal', writeQueueLimit: 100 });
  await store.open();
  t.after(async () => {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  let now = Date.parse('2026-01-01T00:00:00Z');
  let id = 0;
  const quarantine = new Quarantine(
    store,
    { maxAgeDays: 2, maxCount: 3, maxBytes: 1e9, perSourcePerSecond: 0 },
    { rejectedDropped: () => undefined },
    () => new Date(now),
    () => `r${++id}`,
  );

  for (let i = 0; i < 5; i++) {
    await quarantine.record(input, rejection);
    now += 1000;
  }
  // Pruning runs at most once a minute (or every 500 records): all five are still there.
  assert.equal((await store.listRejected({}, 100, null)).length, 5);
  now += 60_000;
  await quarantine.record(input, rejection);
  const kept = await store.listRejected({}, 100, null);
  assert.deepEqual(
    kept.map((r) => r.id),
    ['r6', 'r5', 'r4'],
    'the newest three are kept',
  );
  now += 3 * 86_400_000;
  await quarantine.record(input, rejection);
  assert.deepEqual(
    (await store.listRejected({}, 100, null)).map((r) => r.id),
    ['r7'],
    'older than two days are gone',
  );
});
