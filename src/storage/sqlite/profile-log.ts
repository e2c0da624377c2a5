/**
 * The texts of `profile_log` (held-profiles.ts, docs/architecture.md#held-profiles): a change is
 * logged as the profile's whole document (`{…}`), or, when operations alone changed a profile
 * already stored, as its diff (`[at, [[path, value?]…], segments?]`, src/model/profile-diff.ts),
 * which is the profile's document less everything the change left as it was.
 */
import { applyDiffInPlace, type ProfileDiff } from '../../model/profile-diff.js';
import type { ProfileRecord } from '../../model/records.js';
import { pathText, splitPath, valueText } from './json-texts.js';

/** True when a log text is a diff rather than a document. */
export const isDiffText = (text: string): boolean => text.startsWith('[');

/** A diff as its log text, built by joining its entries' texts: each path is quoted once (pathText). */
export function encodeDiff(diff: ProfileDiff): string {
  let text = `[${valueText(diff.at)},[`;
  for (let i = 0; i < diff.values.length; i++) {
    const entry = diff.values[i]!;
    text += `${i === 0 ? '' : ','}[${pathText(entry[0])}`;
    text += entry.length === 1 ? ']' : `,${valueText(entry[1])}]`;
  }
  return diff.segments === undefined ? `${text}]]` : `${text}],${valueText(diff.segments)}]`;
}

type DiffTuple = [at: string, values: ([string] | [string, unknown])[], segments?: unknown[]];

export function decodeDiff(text: string): ProfileDiff {
  const [at, values, segments] = JSON.parse(text) as DiffTuple;
  const diff: ProfileDiff = {
    at,
    values: values.map((entry) =>
      entry.length === 1 ? [splitPath(entry[0])] : [splitPath(entry[0]), entry[1]],
    ),
  };
  if (segments !== undefined) diff.segments = segments;
  return diff;
}

/** Applies a logged diff's text to a profile the caller owns (applyDiffInPlace). */
export function applyDiffText(profile: ProfileRecord, text: string): void {
  applyDiffInPlace(profile, decodeDiff(text));
}
