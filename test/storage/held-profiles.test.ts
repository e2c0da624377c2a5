/**
 * The writer's held profiles (src/storage/sqlite/held-profiles.ts): a hold is due once its last
 * change is HOLD_MS old, or its first held change MAX_HOLD_MS old, however often it changes; those
 * past the bounds are taken out first; and the first log row still needed.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { newProfile } from '../../src/model/profiles.js';
import { HeldProfiles, HOLD_MS, MAX_HOLD_MS, type Held } from '../../src/storage/sqlite/held-profiles.js';

const AT = '2026-01-01T00:00:00.000Z';

function held(id: string, seq: number, at: number, size = 10): Held {
  return { record: newProfile(id, AT), text: 'x'.repeat(size), size, seq, at };
}

const ids = (taken: [string, Held][]) => taken.map(([id]) => id).sort();

describe('HeldProfiles', () => {
  test('a hold is due once its last change is HOLD_MS old; the first log row needed', () => {
    const holds = new HeldProfiles();
    assert.equal(holds.firstNeeded, Infinity);
    assert.equal(holds.due(0), false);
    holds.hold('a', held('a', 1, 100));
    holds.hold('b', held('b', 2, 200));
    holds.hold('a', held('a', 3, 300));
    assert.equal(holds.size, 2);
    assert.equal(holds.get('a')?.seq, 3);
    // a's first held row is still needed for nothing, but b's is: no row below 1 is.
    assert.equal(holds.firstNeeded, 1);
    assert.equal(holds.due(200 + HOLD_MS), false);
    assert.deepEqual(ids(holds.take(200 + HOLD_MS)), []);
    assert.equal(holds.due(201 + HOLD_MS), true);
    assert.deepEqual(ids(holds.take(201 + HOLD_MS)), ['b']);
    assert.equal(holds.firstNeeded, 1);
    assert.deepEqual(ids(holds.take(301 + HOLD_MS)), ['a']);
    assert.equal(holds.firstNeeded, Infinity);
    // Held again after its row was written: its first held change is this one.
    holds.hold('a', held('a', 4, 400));
    assert.equal(holds.firstNeeded, 4);
    assert.deepEqual(ids(holds.take(399 + HOLD_MS)), []);
    assert.deepEqual(ids(holds.take('all')), ['a']);
    assert.equal(holds.size, 0);
  });

  test('a profile changed more often than HOLD_MS is due once held MAX_HOLD_MS', () => {
    const holds = new HeldProfiles();
    holds.hold('a', held('a', 1, 0));
    holds.hold('b', held('b', 2, 10));
    for (let at = 100, seq = 3; at <= MAX_HOLD_MS + 100; at += 100) {
      holds.hold('a', held('a', seq++, at));
      holds.hold('b', held('b', seq++, at + 10));
      assert.deepEqual(ids(holds.take(at + 10)), at + 10 > MAX_HOLD_MS ? ['a'] : [], `at ${at}`);
      if (holds.get('a') === undefined) break;
    }
    assert.deepEqual(ids(holds.take(MAX_HOLD_MS + 11)), ['b']);
  });

  test('a profile that is no more is dropped, and with it the log rows only it needed', () => {
    const holds = new HeldProfiles();
    holds.hold('a', held('a', 1, 0));
    holds.hold('b', held('b', 2, 0));
    holds.drop('a');
    assert.equal(holds.get('a'), undefined);
    assert.equal(holds.firstNeeded, 2);
    assert.deepEqual(ids(holds.take('all')), ['b']);
  });

  test('past its bounds the oldest holds are taken, due or not', () => {
    const byCount = new HeldProfiles({ maxEntries: 3, maxChars: 1_000 });
    for (const [i, id] of ['a', 'b', 'c', 'd', 'e'].entries()) byCount.hold(id, held(id, i + 1, 1_000 + i));
    assert.equal(byCount.due(0), true);
    assert.deepEqual(ids(byCount.take(0)), ['a', 'b']);
    assert.equal(byCount.size, 3);
    assert.equal(byCount.due(0), false);

    const byChars = new HeldProfiles({ maxEntries: 100, maxChars: 250 });
    for (const [i, id] of ['a', 'b', 'c'].entries()) byChars.hold(id, held(id, i + 1, 1_000 + i, 100));
    assert.deepEqual(ids(byChars.take(0)), ['a']);
    // Holding again replaces the document: its characters are counted once.
    byChars.hold('b', held('b', 4, 2_000, 100));
    assert.deepEqual(ids(byChars.take(0)), []);
    assert.equal(byChars.firstNeeded, 2);
    // A longer document counts its own characters; the least recently changed goes first.
    byChars.hold('b', held('b', 5, 2_001, 160));
    assert.deepEqual(ids(byChars.take(0)), ['c']);
  });
});
