/** Target expressions of validation schemas (docs/api.md#targets): `<object>@<dotted.path>` or `<object>@...`. */
export type TargetObject = 'event' | 'session' | 'profile';

export interface Target {
  key: string;
  object: TargetObject;
  /** Path segments inside the object; null for `...` (the whole object). */
  path: string[] | null;
}

const TARGET = /^(event|session|profile)@(.+)$/;

/** Parses a target expression, or returns why it is malformed. */
export function parseTarget(key: string): Target | string {
  const match = TARGET.exec(key);
  if (!match) return 'must be <event|session|profile>@<dotted.path> or <object>@...';
  const [, object, rest] = match as unknown as [string, TargetObject, string];
  if (rest === '...') return { key, object, path: null };
  const path = rest.split('.');
  if (path.some((segment) => segment === '' || /\s/.test(segment))) {
    return 'path segments must be non-empty and contain no spaces';
  }
  return { key, object, path };
}

/** The value at a path (a numeric segment indexes an array); `found` is false when there is none. */
export function resolvePath(root: unknown, path: string[] | null): { found: boolean; value: unknown } {
  if (path === null) return { found: true, value: root };
  let current = root;
  for (const segment of path) {
    if (Array.isArray(current) && /^\d+$/.test(segment)) {
      const index = Number(segment);
      if (index >= current.length) return { found: false, value: undefined };
      current = current[index];
    } else if (current !== null && typeof current === 'object' && Object.hasOwn(current, segment)) {
      current = (current as Record<string, unknown>)[segment];
    } else {
      return { found: false, value: undefined };
    }
  }
  return { found: current !== undefined, value: current };
}
