/**
 * The writer's held profiles (src/storage/sqlite/held-profiles.ts): the oldest hold first, those
 * due or past the bounds taken out to be written, and the first log row still needed; a profile
 * held again keeps the time of its first held change, so it is due however often it changes.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { newProfile } from '../../src/model/profiles.js';
import { HeldProfiles, type Change, type Held } from '../../src/storage/sqlite/held-profiles.js';

const AT = '2026-01-01T00:00:00.000Z';

function held(id: string, seq: number, at: number, size = 10): Change {
  return { record: newProfile(id, AT), text: 'x'.repeat(size), seq, at };
}

const ids = (taken: [string, Held][]) => taken.map(([id]) => id);

describe('HeldProfiles', () => {
  test('takes the holds made before a time, oldest first; a profile held again keeps its place', () => {
    const holds = new HeldProfiles();
    assert.equal(holds.firstNeeded, Infinity);
    assert.equal(holds.oldestAt, Infinity);
    holds.hold('a', held('a', 1, 100));
    holds.hold('b', held('b', 2, 200));
    holds.hold('a', held('a', 3, 300, 20));
    assert.equal(holds.size, 2);
    // a's latest change, with the time and log row of its first.
    assert.deepEqual(
      { seq: holds.get('a')?.seq, text: holds.get('a')?.text.length, at: holds.get('a')?.at },
      { seq: 3, text: 20, at: 100 },
    );
    assert.equal(holds.firstNeeded, 1);
    assert.equal(holds.oldestAt, 100);
    assert.deepEqual(ids(holds.take(100)), []);
    // Changed again at 300, a is still due at 150: its row waits no longer than its first change.
    assert.deepEqual(ids(holds.take(150)), ['a']);
    assert.equal(holds.firstNeeded, 2);
    holds.hold('a', held('a', 4, 400));
    assert.equal(holds.get('a')?.at, 400);
    assert.deepEqual(ids(holds.take(250)), ['b']);
    assert.equal(holds.firstNeeded, 4);
    assert.deepEqual(ids(holds.take('all')), ['a']);
    assert.equal(holds.size, 0);
    assert.equal(holds.firstNeeded, Infinity);
  });

  test('past its bounds the oldest holds are taken, due or not', () => {
    const byCount = new HeldProfiles({ maxEntries: 3, maxChars: 1_000 });
    for (const [i, id] of ['a', 'b', 'c', 'd', 'e'].entries()) byCount.hold(id, held(id, i + 1, 1_000 + i));
    assert.deepEqual(ids(byCount.take(0)), ['a', 'b']);
    assert.equal(byCount.size, 3);

    const byChars = new HeldProfiles({ maxEntries: 100, maxChars: 250 });
    for (const [i, id] of ['a', 'b', 'c'].entries()) byChars.hold(id, held(id, i + 1, 1_000 + i, 100));
    assert.deepEqual(ids(byChars.take(0)), ['a']);
    // Holding again replaces the document: its characters are counted once.
    byChars.hold('b', held('b', 4, 2_000, 100));
    assert.deepEqual(ids(byChars.take(0)), []);
    assert.equal(byChars.firstNeeded, 2);
    // A longer document counts its own characters.
    byChars.hold('c', held('c', 5, 2_001, 160));
    assert.deepEqual(ids(byChars.take(0)), ['b']);
  });
});
