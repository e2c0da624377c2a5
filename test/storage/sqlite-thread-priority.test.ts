/**
 * The embedded store's threads run at a lower priority than the service's thread
 * (src/storage/sqlite/thread-priority.ts): the writer thread and the checkpointer it starts, and
 * only while the store is open.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { getPriority } from 'node:os';
import { test } from 'node:test';
import { SqliteStore } from '../../src/storage/sqlite/store.js';
import { taskId, WRITER_NICENESS } from '../../src/storage/sqlite/thread-priority.js';
import { tempDir } from '../helpers.js';

/** The niceness of each thread of this process, from /proc (the field after the command's name). */
function nicenesses(): number[] {
  return readdirSync('/proc/self/task').flatMap((id) => {
    try {
      const stat = readFileSync(`/proc/self/task/${id}/stat`, 'utf8');
      return [Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])];
    } catch {
      return []; // the thread ended meanwhile
    }
  });
}

test('the writer and checkpointer threads run at the lower priority while the store is open', async (t) => {
  const main = taskId();
  if (main === null) return t.skip('threads have no priority of their own here (not Linux)');
  const own = getPriority(main);
  const lowered = Math.min(19, own + WRITER_NICENESS);
  assert.notEqual(lowered, own, 'this process already runs at the lowest priority');
  const count = () => nicenesses().filter((n) => n === lowered).length;
  const before = count();

  const dataDir = tempDir('collector-priority-');
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const store = new SqliteStore({ dataDir, sync: 'normal', writeQueueLimit: 100 });
  await store.open();
  try {
    assert.equal(getPriority(main), own, 'the service thread keeps its priority');
    assert.equal(count(), before + 2, 'the writer thread and the checkpointer thread');
  } finally {
    await store.close();
  }
  // The threads are gone once closed (exiting may take a moment after close resolves).
  for (let i = 0; i < 100 && count() !== before; i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal(count(), before);
});
