/**
 * Profile operations applied to a copy (the pipeline's prediction, PostgreSQL) and in place (the
 * embedded store's writer): the same results, and only the in-place form changes what it is given.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { applyOps, applyOpsInPlace, type ProfileOp } from '../../src/model/profile-ops.js';
import { newProfile } from '../../src/model/profiles.js';
import type { ProfileRecord } from '../../src/model/records.js';

const AT = '2026-01-02T03:04:05.000Z';

/** A stored profile with something under every root the operations write. */
function stored(): ProfileRecord {
  const profile = newProfile('p1', '2026-01-01T00:00:00.000Z');
  profile.traits.public = { n: 1, pages: ['/'], nested: { kept: true } };
  profile.consents = { email: false };
  profile.segments = ['old'];
  profile.interests = { shoes: 1 };
  return profile;
}

const OPS: ProfileOp[] = [
  { op: 'increment', path: ['traits', 'public', 'n'], value: 2 },
  { op: 'set', path: ['traits', 'public', 'nested', 'deep', 'x'], value: { y: 1 } },
  { op: 'set_once', path: ['traits', 'private', 'first'], value: 'a' },
  { op: 'append', path: ['traits', 'public', 'pages'], value: ['/', '/cart'] },
  { op: 'unset', path: ['consents', 'email'] },
  { op: 'add_segment', value: 'new' },
  { op: 'remove_segment', value: 'old' },
  { op: 'increment', path: ['interests', 'shoes'], value: 0.5 },
];

describe('profile operations', () => {
  test('applied to a copy, the profile given is left as it was', () => {
    const profile = stored();
    const before = structuredClone(profile);
    const { profile: after, changed } = applyOps(profile, OPS, AT);
    assert.equal(changed, true);
    assert.notEqual(after, profile);
    assert.deepEqual(profile, before);
    assert.equal(after.metadata.time.update, AT);
    assert.equal(profile.metadata.time.update, before.metadata.time.update);
  });

  test('in place, the profile given becomes what applyOps answers', () => {
    const expected = applyOps(stored(), OPS, AT).profile;
    const profile = stored();
    const { profile: after, changed } = applyOpsInPlace(profile, OPS, AT);
    assert.equal(changed, true);
    assert.equal(after, profile);
    assert.deepEqual(profile, expected);
    assert.deepEqual(profile.traits.public, {
      n: 3,
      pages: ['/', '/cart'],
      nested: { kept: true, deep: { x: { y: 1 } } },
    });
    assert.deepEqual(profile.segments, ['new']);
  });

  test('in place, operations that change nothing leave the profile as it was', () => {
    const profile = stored();
    const before = structuredClone(profile);
    const same: ProfileOp[] = [
      { op: 'set', path: ['traits', 'public', 'n'], value: 1 },
      { op: 'set_once', path: ['traits', 'public', 'n'], value: 5 },
      { op: 'unset', path: ['traits', 'private', 'missing'] },
      { op: 'add_segment', value: 'old' },
      { op: 'append', path: ['traits', 'public', 'pages'], value: '/' },
    ];
    const { profile: after, changed } = applyOpsInPlace(profile, same, AT);
    assert.equal(changed, false);
    assert.equal(after, profile);
    assert.deepEqual(profile, before);
  });
});
