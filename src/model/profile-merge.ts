/**
 * The merge policy (docs/api.md#merging): what the survivor's record becomes when another profile of
 * the same person is merged into it. Pure; both stores apply it inside the merging transaction.
 */
import { sameIdentity } from './identities.js';
import type { JsonObject, ProfileRecord } from './records.js';

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function setOwn(target: JsonObject, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** `first`'s values win; `second` fills the keys `first` lacks, objects key by key. */
function fillGaps(first: JsonObject, second: JsonObject): JsonObject {
  const result: JsonObject = { ...first };
  for (const key of Object.keys(second)) {
    const mine = Object.hasOwn(first, key) ? first[key] : undefined;
    const theirs = second[key];
    if (mine === undefined) setOwn(result, key, theirs);
    else if (isObject(mine) && isObject(theirs)) setOwn(result, key, fillGaps(mine, theirs));
  }
  return result;
}

/** Every key of both; `top`'s value replaces `base`'s where both have one. */
function overlay(base: JsonObject, top: JsonObject): JsonObject {
  const result: JsonObject = { ...base };
  for (const key of Object.keys(top)) setOwn(result, key, top[key]);
  return result;
}

/** Interests of both: numbers present in both add up; otherwise the survivor's value is kept. */
function addInterests(first: JsonObject, second: JsonObject): JsonObject {
  const result = fillGaps(first, second);
  for (const key of Object.keys(second)) {
    const [a, b] = [first[key], second[key]];
    if (Object.hasOwn(first, key) && typeof a === 'number' && typeof b === 'number') {
      const sum = a + b;
      if (Number.isFinite(sum)) setOwn(result, key, sum);
    }
  }
  return result;
}

function union<T>(first: T[], second: T[], same: (a: T, b: T) => boolean): T[] {
  return [...first, ...second.filter((item) => !first.some((kept) => same(kept, item)))];
}

const later = (a: string | null, b: string | null) => (a === null ? b : b === null || a >= b ? a : b);
const earlier = (a: string, b: string) => (a <= b ? a : b);

/**
 * `other` merged into `survivor`: the survivor keeps its id and its traits where both have a value
 * (the other's fill the gaps); visits add up; segments, ids, interests and consents are unioned
 * (numeric interests add up; a consent both hold is taken from the profile updated last); the
 * earlier creation time is kept; `merged` records the other's id (and those merged into it before).
 */
export function mergeProfiles(survivor: ProfileRecord, other: ProfileRecord, at: string): ProfileRecord {
  const visits = survivor.stats.visits + other.stats.visits;
  const [s, o] = [survivor.metadata.time, other.metadata.time];
  const current = later(s.visit.current, o.visit.current);
  // The previous visit: the latest start among the others.
  const starts = [s.visit.current, o.visit.current, s.visit.last, o.visit.last].filter(
    (t): t is string => t !== null,
  );
  const previous = starts.filter((t) => t !== current).reduce<string | null>(later, null);
  const otherNewer = o.update > s.update;
  return {
    ...survivor,
    metadata: {
      ...survivor.metadata,
      time: {
        insert: earlier(s.insert, o.insert),
        update: at,
        visit: { last: previous, current, count: visits },
      },
    },
    stats: { ...other.stats, ...survivor.stats, visits },
    traits: {
      public: fillGaps(survivor.traits.public, other.traits.public),
      private: fillGaps(survivor.traits.private, other.traits.private),
    },
    consents: otherNewer
      ? overlay(survivor.consents, other.consents)
      : overlay(other.consents, survivor.consents),
    segments: union(survivor.segments, other.segments, (a, b) => a === b),
    interests: addInterests(survivor.interests, other.interests),
    ids: union(survivor.ids, other.ids, sameIdentity),
    merged: [...survivor.merged, ...other.merged, { id: other.id, time: at }],
  };
}
