/**
 * Profile paths in their dotted form, as the writer's messages and its profile log carry them
 * (change-text.ts, profile-log.ts). Rules' operations share their paths' arrays
 * (src/domain/rules/compile.ts) and come back with every change, so each path is joined once on the
 * way out (dottedPath) and split once on the way in (splitPath).
 */

const dottedPaths = new WeakMap<readonly string[], string>();

/**
 * A path in its dotted form. Joined by `+`, not `join`: once a segment has served as a property key,
 * V8 may have turned it into a reference to its interned copy, and Node 20's `join` then makes a
 * two-byte string of ASCII text, which every JSON text the path goes into would become too (the
 * profile log's diffs, twice the memory and slower to write to SQLite).
 */
export function dottedPath(path: readonly string[]): string {
  let dotted = dottedPaths.get(path);
  if (dotted === undefined) {
    dotted = path[0] ?? '';
    for (let i = 1; i < path.length; i++) dotted += `.${path[i]}`;
    dottedPaths.set(path, dotted);
  }
  return dotted;
}

/** A path as the JSON text of its dotted form. */
export const pathText = (path: readonly string[]): string => JSON.stringify(dottedPath(path));

/**
 * Paths split before, by their dotted form: the rules' few paths come back with every change, and
 * operations only read them (src/model/profile-ops.ts), so one array serves them all.
 */
const splitPaths = new Map<string, string[]>();
const MAX_SPLIT_PATHS = 1_000;

/** A dotted path as its segments (a frozen array, shared by every caller of the same path). */
export function splitPath(dotted: string): string[] {
  let path = splitPaths.get(dotted);
  if (path === undefined) {
    path = Object.freeze(dotted.split('.')) as string[];
    if (splitPaths.size < MAX_SPLIT_PATHS) splitPaths.set(dotted, path);
  }
  return path;
}
