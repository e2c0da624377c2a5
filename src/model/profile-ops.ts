/**
 * The operations profile rules apply to a profile (docs/api.md#operations), with their values
 * resolved, and the pure function that applies them. The pipeline applies them to predict the
 * profile a request leaves; the store applies the same operations to the profile as it is stored
 * when the request commits. No node-only imports: the console checks rules with these bounds too.
 */
import type { IdentityKey, JsonObject, ProfileChange, ProfileRecord } from './records.js';

export type ProfileOp =
  | { op: 'set' | 'set_once' | 'append'; path: string[]; value: unknown }
  | { op: 'increment'; path: string[]; value: number }
  | { op: 'unset'; path: string[] }
  | { op: 'add_segment' | 'remove_segment'; value: string }
  | { op: 'identify'; type: string; value: string };

/** Where operations may write: the first two segments (or one) of every path. */
export const PATH_ROOTS = ['traits.public', 'traits.private', 'consents', 'interests'] as const;

/** Keys that name prototypes rather than data: refused in every path. */
export const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export const OPERATION_BOUNDS = {
  /** Segments of a path below its root. */
  maxPathDepth: 10,
  /** Bytes of a value as JSON (a literal when saving, a value taken from an event when applying). */
  maxValueBytes: 16 * 1024,
  /** Items an `append` array keeps: past it the oldest go. */
  maxArrayItems: 100,
  /** Segments of a profile: past it `add_segment` adds nothing. */
  maxSegments: 200,
  /** Characters of a segment name. */
  maxSegmentLength: 128,
} as const;

/** The segments of a dotted path, or why the path cannot be written (docs/api.md#operations). */
export function parseProfilePath(path: string): string[] | string {
  const root = PATH_ROOTS.find((r) => path.startsWith(`${r}.`));
  if (!root) return `must be a dotted path under ${PATH_ROOTS.join(', ')}`;
  const segments = path.split('.');
  const below = segments.length - root.split('.').length;
  if (segments.some((s) => s === '' || /\s/.test(s))) return 'path segments must be non-empty without spaces';
  if (segments.some((s) => PROTOTYPE_KEYS.has(s)))
    return 'path segments may not be __proto__, constructor or prototype';
  if (below > OPERATION_BOUNDS.maxPathDepth) {
    return `at most ${OPERATION_BOUNDS.maxPathDepth} segments below ${root}`;
  }
  return segments;
}

/** The bytes of a value as JSON (strings counted by UTF-16 length, close enough for a bound). */
export function valueSize(value: unknown): number {
  if (typeof value === 'string') return value.length + 2;
  if (value === null || typeof value !== 'object') return 8;
  return JSON.stringify(value)?.length ?? 0;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Sets an own property, even for a key like `__proto__` inside stored data. */
function setOwn(target: JsonObject, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Equality of JSON values. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((item, i) => sameJson(item, other[i]));
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return (
    ka.length === kb.length &&
    ka.every((k) => Object.hasOwn(b, k) && sameJson((a as JsonObject)[k], (b as JsonObject)[k]))
  );
}

function getIn(root: JsonObject, path: string[]): unknown {
  let current: unknown = root;
  for (const key of path) {
    if (!isObject(current) || !Object.hasOwn(current, key)) return undefined;
    current = current[key];
  }
  return current;
}

/**
 * The profile with `value` at `path` (undefined removes the key), copying only the objects on the
 * path; an object missing on the way, or a value that is not an object, becomes `{}`.
 */
function setIn(root: JsonObject, path: string[], value: unknown): JsonObject {
  const [key, ...rest] = path as [string, ...string[]];
  const copy: JsonObject = { ...root };
  if (rest.length === 0) {
    if (value === undefined) delete copy[key];
    else setOwn(copy, key, value);
    return copy;
  }
  const child = Object.hasOwn(root, key) ? root[key] : undefined;
  if (value === undefined && !isObject(child)) return root;
  setOwn(copy, key, setIn(isObject(child) ? child : {}, rest, value));
  return copy;
}

/** The next value at a path for one operation, or undefined when it leaves the path as it is. */
function nextValue(op: Extract<ProfileOp, { path: string[] }>, current: unknown): unknown {
  switch (op.op) {
    case 'set':
      return sameJson(current, op.value) ? undefined : op.value;
    case 'set_once':
      return current === undefined ? op.value : undefined;
    case 'increment': {
      const sum = (typeof current === 'number' ? current : 0) + op.value;
      return Number.isFinite(sum) && sum !== current ? sum : undefined;
    }
    case 'append': {
      const items = Array.isArray(current) ? current : [];
      const added = (Array.isArray(op.value) ? op.value : [op.value]).filter(
        (item, i, all) =>
          !items.some((old) => sameJson(old, item)) && all.findIndex((x) => sameJson(x, item)) === i,
      );
      if (added.length === 0 && Array.isArray(current)) return undefined;
      return [...items, ...added].slice(-OPERATION_BOUNDS.maxArrayItems);
    }
    default:
      return undefined;
  }
}

/** Applies one operation; returns the profile unchanged (the same object) when it changes nothing. */
function applyOne(profile: ProfileRecord, op: ProfileOp): ProfileRecord {
  const doc = profile as unknown as JsonObject;
  switch (op.op) {
    case 'identify':
      return profile;
    case 'add_segment': {
      const segments = profile.segments;
      if (segments.includes(op.value) || segments.length >= OPERATION_BOUNDS.maxSegments) return profile;
      return { ...profile, segments: [...segments, op.value] };
    }
    case 'remove_segment':
      return profile.segments.includes(op.value)
        ? { ...profile, segments: profile.segments.filter((s) => s !== op.value) }
        : profile;
    case 'unset':
      return getIn(doc, op.path) === undefined
        ? profile
        : (setIn(doc, op.path, undefined) as unknown as ProfileRecord);
    default: {
      const next = nextValue(op, getIn(doc, op.path));
      return next === undefined ? profile : (setIn(doc, op.path, next) as unknown as ProfileRecord);
    }
  }
}

/**
 * Applies operations in order (docs/api.md#operations). Pure: the profile given is not modified.
 * `changed` is true when any operation altered it; `metadata.time.update` is then `at`.
 */
export function applyOps(
  profile: ProfileRecord,
  ops: ProfileOp[],
  at: string,
): { profile: ProfileRecord; changed: boolean } {
  let current = profile;
  for (const op of ops) current = applyOne(current, op);
  if (current === profile) return { profile, changed: false };
  const time = { ...current.metadata.time, update: at };
  return { profile: { ...current, metadata: { ...current.metadata, time } }, changed: true };
}

/** The change's operations other than `identify`, in order; and its identities. */
export function splitChange(change: ProfileChange | null): { ops: ProfileOp[]; identities: IdentityKey[] } {
  const ops: ProfileOp[] = [];
  const identities: IdentityKey[] = [];
  for (const step of change?.steps ?? []) {
    for (const op of step.ops) {
      if (op.op === 'identify') identities.push({ type: op.type, value: op.value });
      else ops.push(op);
    }
  }
  return { ops, identities };
}
