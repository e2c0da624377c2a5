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

/** The value at a path, or undefined when something on the way is missing or not an object. */
export function getIn(root: JsonObject, path: readonly string[]): unknown {
  let current: unknown = root;
  for (const key of path) {
    if (!isObject(current) || !Object.hasOwn(current, key)) return undefined;
    current = current[key];
  }
  return current;
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

/**
 * The objects of one application of operations to a copy: the profile and the containers on the
 * paths written are copied once, the first time one is written, and changed in place afterwards;
 * what is not written stays shared with the profile given. Plain assignment is safe: no path
 * segment is a prototype key (parseProfilePath), and a spread copies stored `__proto__` keys as
 * own data.
 */
class Draft {
  /** The objects copied so far. */
  private readonly copies = new Set<object>();
  root: JsonObject | null = null;

  constructor(private readonly original: ProfileRecord) {}

  get current(): JsonObject {
    return this.root ?? (this.original as unknown as JsonObject);
  }

  private own<T extends object>(value: T): T {
    if (this.copies.has(value)) return value;
    const copy = (Array.isArray(value) ? [...value] : { ...value }) as T;
    this.copies.add(copy);
    return copy;
  }

  /** `value` at `path` (undefined removes the key); what is missing or not an object on the way becomes `{}`. */
  set(path: string[], value: unknown): void {
    this.root = this.own(this.current);
    let parent = this.root;
    for (let i = 0; i < path.length - 1; i++) {
      const key = path[i]!;
      const child = Object.hasOwn(parent, key) ? parent[key] : undefined;
      const next = isObject(child) ? this.own(child) : this.own({});
      parent[key] = next;
      parent = next;
    }
    const last = path[path.length - 1]!;
    if (value === undefined) delete parent[last];
    else parent[last] = value;
  }

  segments(next: unknown[]): void {
    this.root = this.own(this.current);
    this.root.segments = next;
  }
}

/** The segments after a segment operation, or undefined when it changes nothing. */
function nextSegments(op: Extract<ProfileOp, { op: 'add_segment' | 'remove_segment' }>, segments: unknown[]) {
  if (op.op === 'add_segment') {
    if (segments.includes(op.value) || segments.length >= OPERATION_BOUNDS.maxSegments) return undefined;
    return [...segments, op.value];
  }
  return segments.includes(op.value) ? segments.filter((s) => s !== op.value) : undefined;
}

/** Applies one operation to the draft; false when it changes nothing. */
function applyOne(draft: Draft, op: ProfileOp): boolean {
  const doc = draft.current;
  switch (op.op) {
    case 'identify':
      return false;
    case 'add_segment':
    case 'remove_segment': {
      const next = nextSegments(op, doc.segments as unknown[]);
      if (next === undefined) return false;
      draft.segments(next);
      return true;
    }
    case 'unset':
      if (getIn(doc, op.path) === undefined) return false;
      draft.set(op.path, undefined);
      return true;
    default: {
      const next = nextValue(op, getIn(doc, op.path));
      if (next === undefined) return false;
      draft.set(op.path, next);
      return true;
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
  const draft = new Draft(profile);
  let changed = false;
  for (const op of ops) if (applyOne(draft, op)) changed = true;
  if (!changed) return { profile, changed: false };
  const result = draft.current as unknown as ProfileRecord;
  result.metadata = { ...result.metadata, time: { ...result.metadata.time, update: at } };
  return { profile: result, changed: true };
}

/**
 * Writes one operation's next value (undefined: removes the key) at its path, in place: what is
 * missing or not an object on the way becomes `{}`, as in a copy (Draft.set).
 */
function setInPlace(root: JsonObject, path: readonly string[], value: unknown): void {
  let parent = root;
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i]!;
    const child = Object.hasOwn(parent, key) ? parent[key] : undefined;
    if (isObject(child)) parent = child;
    else parent = parent[key] = {};
  }
  const last = path[path.length - 1]!;
  if (value === undefined) delete parent[last];
  else parent[last] = value;
}

/**
 * applyOps on the profile given, which is changed and answered: for a caller that owns the record
 * and every object in it, so that no other holder sees the change (the embedded store's writer:
 * src/storage/sqlite/profiles.ts). Nothing is changed when `changed` is false. `written`: the
 * paths the operations wrote, in order (null for the segments), for diffOf (profile-diff.ts).
 * Each path is walked once to read its value and, when that value is there, once more only for
 * its last key.
 */
export function applyOpsInPlace(
  profile: ProfileRecord,
  ops: ProfileOp[],
  at: string,
): { profile: ProfileRecord; changed: boolean; written: (readonly string[] | null)[] } {
  const root = profile as unknown as JsonObject;
  const written: (readonly string[] | null)[] = [];
  for (const op of ops) {
    if (op.op === 'identify') continue;
    if (!('path' in op)) {
      const next = nextSegments(op, profile.segments);
      if (next === undefined) continue;
      profile.segments = next;
      written.push(null);
      continue;
    }
    // The value's container, when every object on the way is there.
    const path = op.path;
    let parent: JsonObject | null = root;
    for (let i = 0; parent !== null && i < path.length - 1; i++) {
      const child: unknown = Object.hasOwn(parent, path[i]!) ? parent[path[i]!] : undefined;
      parent = isObject(child) ? child : null;
    }
    const last = path[path.length - 1]!;
    const current = parent !== null && Object.hasOwn(parent, last) ? parent[last] : undefined;
    const next = op.op === 'unset' ? undefined : nextValue(op, current);
    if (op.op === 'unset' ? current === undefined : next === undefined) continue;
    if (parent === null) setInPlace(root, path, next);
    else if (next === undefined) delete parent[last];
    else parent[last] = next;
    written.push(path);
  }
  if (written.length === 0) return { profile, changed: false, written };
  profile.metadata.time.update = at;
  return { profile, changed: true, written };
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

/** The change without the steps of these events (duplicates, which run no rule). */
export function withoutEvents(change: ProfileChange, eventIds: string[]): ProfileChange {
  const skipped = new Set(eventIds);
  return { at: change.at, steps: change.steps.filter((step) => !skipped.has(step.event)) };
}
