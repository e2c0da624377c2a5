/**
 * Profile operations applied to a copy (the pipeline's prediction, PostgreSQL) and in place (the
 * embedded store's writer): the same results, and only the in-place form changes what it is given;
 * the same too for thousands of random operations on random profiles, through values that are not
 * objects, arrays and missing keys on the way.
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

  test('in place and on a copy agree on random operations and profiles', () => {
    // A small deterministic generator (mulberry32), so that a failure comes back the same.
    let seed = 0x5eed;
    const random = () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const keys = ['a', 'b', 'c'];
    const values = (): unknown =>
      pick([1, 2.5, -1, 'x', 'y', true, null, [], ['x'], [1, 'x'], { a: 1 }, { b: { c: 2 } }]);
    const paths = [
      ...keys.map((k) => ['traits', 'public', k]),
      ...keys.map((k) => ['traits', 'public', 'a', k]),
      ...keys.map((k) => ['traits', 'private', 'b', k, 'c']),
      ['consents', 'a'],
      ['interests', 'a'],
      ['interests', 'b', 'c'],
    ];
    const randomOp = (): ProfileOp => {
      const path = pick(paths);
      switch (pick(['set', 'set_once', 'append', 'increment', 'unset', 'add_segment', 'remove_segment'])) {
        case 'set':
          return { op: 'set', path, value: values() };
        case 'set_once':
          return { op: 'set_once', path, value: values() };
        case 'append':
          return { op: 'append', path, value: values() };
        case 'increment':
          return { op: 'increment', path, value: pick([1, 0.5, -2, 0]) };
        case 'unset':
          return { op: 'unset', path };
        case 'add_segment':
          return { op: 'add_segment', value: pick(['s1', 's2']) };
        default:
          return { op: 'remove_segment', value: pick(['s1', 's2']) };
      }
    };
    for (let round = 0; round < 2_000; round++) {
      const start = stored();
      // Some of what a profile may hold where the operations go.
      for (const path of paths) {
        if (random() < 0.3)
          Object.assign(start, applyOps(start, [{ op: 'set', path, value: values() }], AT).profile);
      }
      const ops = Array.from({ length: 1 + Math.floor(random() * 6) }, randomOp);
      const copied = applyOps(structuredClone(start), ops, AT);
      const inPlace = applyOpsInPlace(structuredClone(start), ops, AT);
      const context = JSON.stringify({ start, ops });
      assert.equal(inPlace.changed, copied.changed, context);
      assert.deepEqual(inPlace.profile, copied.profile, context);
      assert.equal(inPlace.written.length > 0, copied.changed, context);
    }
  });
});
