import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GroupCommitter, type ItemOutcome } from '../../src/storage/group-commit.js';
import { WriteQueueFullError } from '../../src/storage/store.js';

/** A batch writer whose batches stay pending until the test lets them commit. */
function controlledWriter() {
  const batches: { items: number[]; commit: () => void }[] = [];
  const write = (items: number[]) =>
    new Promise<ItemOutcome<number>[]>((resolve) => {
      batches.push({ items, commit: () => resolve(items.map((value) => ({ ok: true, value: value * 10 }))) });
    });
  return { batches, write };
}

/** A few turns of the event loop: enough for a settled batch to be followed by the next flush. */
async function turn(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
}

test('one batch in flight: what arrives meanwhile waits and goes together in the next batch', async () => {
  const { batches, write } = controlledWriter();
  const committer = new GroupCommitter(write, 100);
  const first = committer.submit(1);
  await turn();
  const later = [committer.submit(2), committer.submit(3)];
  await turn();
  assert.deepEqual(
    batches.map((b) => b.items),
    [[1]],
    'the second batch waits for the first to commit',
  );
  batches[0]!.commit();
  assert.equal(await first, 10);
  await turn();
  assert.deepEqual(
    batches.map((b) => b.items),
    [[1], [2, 3]],
  );
  batches[1]!.commit();
  assert.deepEqual(await Promise.all(later), [20, 30]);
});

test('two batches in flight: the next batch is handed over before the previous one committed', async () => {
  const { batches, write } = controlledWriter();
  const committer = new GroupCommitter(write, 100, { maxInFlight: 2 });
  const answers = [committer.submit(1)];
  await turn();
  answers.push(committer.submit(2));
  await turn();
  answers.push(committer.submit(3));
  await turn();
  assert.deepEqual(
    batches.map((b) => b.items),
    [[1], [2]],
    'a third batch waits while two are in flight',
  );
  let drained = false;
  const drain = committer.drain().then(() => (drained = true));
  batches[1]!.commit();
  assert.equal(await answers[1], 20, 'each submitter is answered when its own batch commits');
  await turn();
  assert.deepEqual(
    batches.map((b) => b.items),
    [[1], [2], [3]],
  );
  batches[2]!.commit();
  await turn();
  assert.equal(drained, false, 'drain waits for every batch in flight');
  batches[0]!.commit();
  await drain;
  assert.deepEqual(await Promise.all(answers), [10, 20, 30]);
});

test('past the queue bound, submit is refused with WriteQueueFullError', async () => {
  const { batches, write } = controlledWriter();
  const committer = new GroupCommitter(write, 2);
  const accepted = [committer.submit(1), committer.submit(2)];
  await assert.rejects(committer.submit(3), WriteQueueFullError);
  assert.equal(committer.depth, 2);
  await turn();
  batches[0]!.commit();
  assert.deepEqual(await Promise.all(accepted), [10, 20]);
});
