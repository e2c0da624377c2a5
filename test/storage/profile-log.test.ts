/**
 * The texts of the embedded store's profile log (src/storage/sqlite/profile-log.ts): a diff comes
 * back from its text as it went in, removals and segments included, and is told from a document;
 * a document grows by no more than its change's diff text, which held sizes count on.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { diffOf, type ProfileDiff } from '../../src/model/profile-diff.js';
import { applyOpsInPlace, type ProfileOp } from '../../src/model/profile-ops.js';
import { newProfile } from '../../src/model/profiles.js';
import { applyDiffText, decodeDiff, encodeDiff, isDiffText } from '../../src/storage/sqlite/profile-log.js';

const AT = '2026-01-02T03:04:05.000Z';

describe('profile log texts', () => {
  test('a diff comes back from its text; a document is not a diff', () => {
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
    for (const diff of diffs) {
      const text = encodeDiff(diff);
      assert.equal(isDiffText(text), true);
      assert.deepEqual(decodeDiff(text), diff);
    }
    assert.equal(
      encodeDiff(diffs[0]!),
      `["${AT}",[["traits.public.n",3],["consents.email"],["interests.x",null]]]`,
    );
    assert.equal(isDiffText(JSON.stringify(newProfile('p1', AT))), false);
  });

  test('a diff text applied to a profile sets, removes and replaces the segments', () => {
    const profile = newProfile('p1', '2026-01-01T00:00:00.000Z');
    profile.consents = { email: true, sms: false };
    applyDiffText(
      profile,
      encodeDiff({
        at: AT,
        values: [[['traits', 'public', 'n'], 3], [['consents', 'email']]],
        segments: ['s1'],
      }),
    );
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
