/**
 * What one application of operations wrote to a profile, as values rather than operations: each
 * key written under a root (PATH_ROOTS), with its whole value once all of them ran (or none:
 * removed), and the segments when they changed. The embedded store logs a held profile's change
 * this way (docs/architecture.md#held-profiles): a few hundred characters where the document has
 * all of them. Applied to the profile it was taken from, a diff gives the profile after the
 * operations. Since a diff carries values rather than steps, and its keys are disjoint or equal,
 * diffs d1…dn applied in order to the profile after any dk give the profile after dn, as they do to
 * the profile before d1: reading the log again is exact whatever part of it a row already has.
 */
import { getIn, PROTOTYPE_KEYS } from './profile-ops.js';
import type { JsonObject, ProfileRecord } from './records.js';

export interface ProfileDiff {
  /** The change's time: the profile's `metadata.time.update` after it. */
  at: string;
  /**
   * Each key written under a root (`traits.public.a` for a write to `traits.public.a.b`), in the
   * order first written, with its whole value after the change; none: removed.
   */
  values: ([path: readonly string[]] | [path: readonly string[], value: unknown])[];
  /** The profile's segments after the change, when it changed them. */
  segments?: unknown[];
}

/** The segments of a path's root (PATH_ROOTS): two under `traits`, else one. */
const rootLength = (path: readonly string[]): number => (path[0] === 'traits' ? 2 : 1);

const samePath = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((key, i) => key === b[i]);

/** The diff of a change already applied to `profile`, from the paths it wrote (applyOpsInPlace). */
export function diffOf(
  profile: ProfileRecord,
  written: (readonly string[] | null)[],
  at: string,
): ProfileDiff {
  const diff: ProfileDiff = { at, values: [] };
  // A path written twice is mostly the same array (the rules share theirs). A key that still comes
  // twice (two arrays of one path) comes with the same value both times, which replays the same.
  const seen = new Set<readonly string[]>();
  for (const path of written) {
    if (path === null) {
      diff.segments = profile.segments;
      continue;
    }
    if (seen.has(path)) continue;
    seen.add(path);
    const length = rootLength(path) + 1;
    let key = path;
    if (path.length !== length) {
      key = path.slice(0, length);
      if (diff.values.some(([kept]) => samePath(kept, key))) continue;
    }
    const value = getIn(profile as unknown as JsonObject, key);
    diff.values.push(value === undefined ? [key] : [key, value]);
  }
  return diff;
}

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Applies a diff to a profile the caller owns, in place. A root missing or not an object becomes
 * `{}`, as the operations that wrote under it made it. A path with a prototype key (which no
 * operation can write) is passed over.
 */
export function applyDiffInPlace(profile: ProfileRecord, diff: ProfileDiff): void {
  for (const entry of diff.values) {
    const path = entry[0];
    if (path.length !== rootLength(path) + 1 || path.some((key) => PROTOTYPE_KEYS.has(key))) continue;
    let parent = profile as unknown as JsonObject;
    for (let i = 0; i < path.length - 1; i++) {
      const key = path[i]!;
      const child: unknown = Object.hasOwn(parent, key) ? parent[key] : undefined;
      parent = isObject(child) ? child : (parent[key] = {});
    }
    const last = path[path.length - 1]!;
    if (entry.length === 1) delete parent[last];
    else parent[last] = entry[1];
  }
  if (diff.segments !== undefined) profile.segments = diff.segments as ProfileRecord['segments'];
  profile.metadata.time.update = diff.at;
}
