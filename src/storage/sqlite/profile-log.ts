/**
 * The texts of `profile_log` (held-profiles.ts, docs/architecture.md#held-profiles). A change is
 * logged as the profile's whole document (`{…}`), or, when operations alone changed a profile
 * already stored, as its diff (`[at, [[path, value?]…], segments?]`, src/model/profile-diff.ts),
 * which is the profile's document less everything the change left as it was. One row holds the
 * changes of one transaction, in order, each as `[profileId, document or diff]`; rows written
 * before that hold one change of the profile their `profile_id` names.
 */
import type { ProfileDiff } from '../../model/profile-diff.js';
import type { ProfileRecord } from '../../model/records.js';
import { dottedPath, splitPath } from './json-texts.js';

/** The `profile_id` of a row that holds the changes of one transaction. */
export const TRANSACTION_ROW = '';

/**
 * A diff as its log text: one JSON.stringify, whose text is one flat string (src/storage/sqlite/
 * change-text.ts: encodeChange says why that matters).
 */
export function encodeDiff(diff: ProfileDiff): string {
  const values = diff.values.map((entry) =>
    entry.length === 1 ? [dottedPath(entry[0])] : [dottedPath(entry[0]), entry[1]],
  );
  return JSON.stringify(diff.segments === undefined ? [diff.at, values] : [diff.at, values, diff.segments]);
}

/** One change as an entry of a transaction's row (the document or diff kept as JSON, not quoted). */
export const entryText = (profileId: string, logged: string): string =>
  `[${JSON.stringify(profileId)},${logged}]`;

/** The entries of a transaction's row, in order, as its `doc`. */
export const rowText = (entries: string[]): string => `[${entries.join(',')}]`;

type DiffTuple = [at: string, values: ([string] | [string, unknown])[], segments?: unknown[]];

/** A logged change as read: a document, or a diff. */
export type LoggedChange = { doc: ProfileRecord } | { diff: ProfileDiff };

function diffOfTuple([at, values, segments]: DiffTuple): ProfileDiff {
  const diff: ProfileDiff = {
    at,
    values: values.map((entry) =>
      entry.length === 1 ? [splitPath(entry[0])] : [splitPath(entry[0]), entry[1]],
    ),
  };
  if (segments !== undefined) diff.segments = segments;
  return diff;
}

const logged = (value: unknown): LoggedChange =>
  Array.isArray(value) ? { diff: diffOfTuple(value as DiffTuple) } : { doc: value as ProfileRecord };

/** The changes a row holds, in order, with their profiles' ids. */
export function readLogRow(profileId: string, doc: string): [string, LoggedChange][] {
  const parsed = JSON.parse(doc) as unknown;
  if (profileId !== TRANSACTION_ROW) return [[profileId, logged(parsed)]];
  return (parsed as [string, unknown][]).map(([id, value]) => [id, logged(value)]);
}
