/**
 * Diffs of profile changes (src/model/profile-diff.ts): applied to the profile before the change
 * they give the profile after it; applied in order to a profile that already has some of them they
 * give the profile after the last, whatever the operations did on the way (containers made, keys
 * replaced by values, values removed again, segments).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { applyDiffInPlace, diffOf, type ProfileDiff } from '../../src/model/profile-diff.js';
import { applyOpsInPlace, type ProfileOp } from '../../src/model/profile-ops.js';
import { newProfile } from '../../src/model/profiles.js';
import type { ProfileRecord } from '../../src/model/records.js';

const at = (n: number) => `2026-01-02T03:04:0${n}.000Z`;
const p = (dotted: string) => dotted.split('.');

function stored(): ProfileRecord {
  const profile = newProfile('p1', '2026-01-01T00:00:00.000Z');
  profile.traits.public = { n: 1, pages: ['/'], nested: { kept: true }, scalar: 5 };
  profile.consents = { email: false };
  profile.segments = ['old'];
  profile.interests = { shoes: 1 };
  return profile;
}

/** The changes, each applied in place to the profile after the one before: their diffs and states. */
function changes(...steps: ProfileOp[][]): { states: ProfileRecord[]; diffs: ProfileDiff[] } {
  const profile = stored();
  const states = [structuredClone(profile)];
  const diffs: ProfileDiff[] = [];
  steps.forEach((ops, i) => {
    const { changed, written } = applyOpsInPlace(profile, ops, at(i + 1));
    assert.equal(changed, true, `change ${i + 1} changes the profile`);
    diffs.push(structuredClone(diffOf(profile, written, at(i + 1))));
    states.push(structuredClone(profile));
  });
  return { states, diffs };
}

function replayed(from: ProfileRecord, diffs: ProfileDiff[]): ProfileRecord {
  const profile = structuredClone(from);
  for (const diff of diffs) applyDiffInPlace(profile, diff);
  return profile;
}

const STEPS: ProfileOp[][] = [
  [
    { op: 'increment', path: p('traits.public.n'), value: 2 },
    { op: 'set', path: p('traits.public.nested.deep.x'), value: { y: 1 } },
    { op: 'append', path: p('traits.public.pages'), value: '/cart' },
    { op: 'unset', path: p('consents.email') },
    { op: 'add_segment', value: 'new' },
  ],
  [
    // A container made, then its key removed again: the empty container stays.
    { op: 'set', path: p('traits.private.made.x'), value: 1 },
    { op: 'unset', path: p('traits.private.made.x') },
    // A value replaced by an object, and an object by a value.
    { op: 'set', path: p('traits.public.scalar.inner'), value: 'o' },
    { op: 'set', path: p('traits.public.nested'), value: 7 },
    { op: 'remove_segment', value: 'old' },
  ],
  [
    { op: 'increment', path: p('interests.shoes'), value: 0.5 },
    { op: 'unset', path: p('traits.public.scalar') },
    { op: 'set', path: p('consents.email'), value: true },
  ],
];

describe('profile diffs', () => {
  test('a diff applied to the profile before its change gives the profile after it', () => {
    const { states, diffs } = changes(...STEPS);
    diffs.forEach((diff, i) =>
      assert.deepEqual(replayed(states[i]!, [diff]), states[i + 1], `change ${i + 1}`),
    );
    assert.deepEqual(states[2]!.traits.private, { made: {} });
    assert.deepEqual(states[3]!.traits.public.nested, 7);
    assert.equal(states[3]!.metadata.time.update, at(3));
  });

  test('diffs replayed over a profile that already has some of them give the last state', () => {
    const { states, diffs } = changes(...STEPS);
    for (let k = 0; k < states.length; k++) {
      assert.deepEqual(replayed(states[k]!, diffs), states[states.length - 1], `from the state after ${k}`);
    }
  });

  test('a diff holds each key under a root once, with its whole value after the change', () => {
    const { diffs } = changes(STEPS[0]!, STEPS[1]!);
    assert.deepEqual(diffs[0], {
      at: at(1),
      values: [
        [p('traits.public.n'), 3],
        [p('traits.public.nested'), { kept: true, deep: { x: { y: 1 } } }],
        [p('traits.public.pages'), ['/', '/cart']],
        [p('consents.email')],
      ],
      segments: ['old', 'new'],
    });
    assert.deepEqual(
      diffs[1]!.values.map(([path]) => path.join('.')),
      ['traits.private.made', 'traits.public.scalar', 'traits.public.nested'],
    );
  });

  test('a path with a prototype key, or not one key below a root, is passed over', () => {
    const profile = stored();
    const before = structuredClone(profile);
    applyDiffInPlace(profile, {
      at: before.metadata.time.update,
      values: [
        [p('traits.public.__proto__'), { polluted: true }],
        [p('traits.public.a.b'), 1],
        [p('consents')],
      ],
    });
    assert.deepEqual(profile, before);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });
});
