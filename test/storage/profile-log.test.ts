/**
 * The texts of the embedded store's profile log (src/storage/sqlite/profile-log.ts): a
 * transaction's row gives back its changes in order, each diff as it went in (removals and
 * segments included) and each document as a document; a row of one change, as stores wrote before
 * rows held transactions, reads too; a document grows by no more than its change's diff text,
 * which held sizes count on.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { applyDiffInPlace, diffOf, type ProfileDiff } from '../../src/model/profile-diff.js';
import { applyOpsInPlace, type ProfileOp } from '../../src/model/profile-ops.js';
import { newProfile } from '../../src/model/profiles.js';
import {
  encodeDiff,
  entryText,
  readLogRow,
  rowText,
  TRANSACTION_ROW,
} from '../../src/storage/sqlite/profile-log.js';

const AT = '2026-01-02T03:04:05.000Z';

describe('profile log texts', () => {
  test("a transaction's row gives back its changes in order: diffs and documents", () => {
    const diffs: ProfileDiff[] = [
      {
        at: AT,
        values: [[['traits', 'public', 'n'], 3], [['consents', 'email']], [['interests', 'x'], null]],
      },
      {
        at: AT,
        values: [[['traits', 'private', 'o'], { a: [1, 'two', { b: false }] }]],
        segments: ['s1', 's2'],
      },
      { at: AT, values: [], segments: [] },
    ];
    const doc = newProfile('p "2"', AT);
    const entries = [
      entryText('p1', encodeDiff(diffs[0]!)),
      entryText('p "2"', JSON.stringify(doc)),
      entryText('p1', encodeDiff(diffs[1]!)),
      entryText('p3', encodeDiff(diffs[2]!)),
    ];
    assert.deepEqual(readLogRow(TRANSACTION_ROW, rowText(entries)), [
      ['p1', { diff: diffs[0] }],
      ['p "2"', { doc }],
      ['p1', { diff: diffs[1] }],
      ['p3', { diff: diffs[2] }],
    ]);
    assert.equal(
      encodeDiff(diffs[0]!),
      `["${AT}",[["traits.public.n",3],["consents.email"],["interests.x",null]]]`,
    );
  });

  test('a row of one change, as written before rows held transactions, reads too', () => {
    const diff: ProfileDiff = { at: AT, values: [[['traits', 'public', 'n'], 3]] };
    assert.deepEqual(readLogRow('p1', encodeDiff(diff)), [['p1', { diff }]]);
    const doc = newProfile('p1', AT);
    assert.deepEqual(readLogRow('p1', JSON.stringify(doc)), [['p1', { doc }]]);
  });

  test('a diff read from its text sets, removes and replaces the segments', () => {
    const profile = newProfile('p1', '2026-01-01T00:00:00.000Z');
    profile.consents = { email: true, sms: false };
    const text = encodeDiff({
      at: AT,
      values: [[['traits', 'public', 'n'], 3], [['consents', 'email']]],
      segments: ['s1'],
    });
    const change = readLogRow(TRANSACTION_ROW, rowText([entryText('p1', text)]))[0]?.[1];
    assert.ok(change && 'diff' in change);
    applyDiffInPlace(profile, change.diff);
    assert.deepEqual(profile.traits.public, { n: 3 });
    assert.deepEqual(profile.consents, { sms: false });
    assert.deepEqual(profile.segments, ['s1']);
    assert.equal(profile.metadata.time.update, AT);
  });

  test('a document grows by at most its diff text: held sizes bound the documents', () => {
    const profile = newProfile('p1', '2026-01-01T00:00:00.000Z');
    const steps: ProfileOp[][] = [
      [{ op: 'set', path: ['traits', 'public', 'a'], value: 'x'.repeat(300) }],
      [{ op: 'set', path: ['traits', 'public', 'a', 'b', 'c'], value: [1, 2, 3] }],
      [{ op: 'append', path: ['traits', 'public', 'list'], value: ['one', 'two'] }],
      [
        { op: 'add_segment', value: 'a-long-segment-name' },
        { op: 'increment', path: ['interests', 'i'], value: 0.1 },
      ],
      [
        { op: 'unset', path: ['traits', 'public', 'a'] },
        { op: 'set', path: ['consents', 'c'], value: { d: null } },
      ],
    ];
    steps.forEach((ops, i) => {
      const before = JSON.stringify(profile).length;
      const { written } = applyOpsInPlace(profile, ops, AT);
      const text = encodeDiff(diffOf(profile, written, AT));
      assert.ok(JSON.stringify(profile).length <= before + text.length, `change ${i + 1}`);
    });
  });
});
