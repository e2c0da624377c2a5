import { isDeepStrictEqual } from 'node:util';
import type { JsonObject } from './records.js';

function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Sets an own property, even for keys like `__proto__`, so no input can reach a prototype. */
function setOwn(target: JsonObject, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * Deep-merges `patch` into a copy of `base`: nested objects merge, anything else (arrays included) is
 * replaced. Returns the merged object and whether it differs from `base`.
 */
export function deepMerge(
  base: JsonObject,
  patch: JsonObject | null | undefined,
): { value: JsonObject; changed: boolean } {
  if (!patch) return { value: base, changed: false };
  const value: JsonObject = {};
  for (const key of Object.keys(base)) setOwn(value, key, base[key]);
  let changed = false;
  for (const key of Object.keys(patch)) {
    const next = patch[key];
    const current = Object.prototype.hasOwnProperty.call(base, key) ? base[key] : undefined;
    if (isPlainObject(current) && isPlainObject(next)) {
      const merged = deepMerge(current, next);
      if (merged.changed) {
        setOwn(value, key, merged.value);
        changed = true;
      }
    } else if (current === undefined || !isDeepStrictEqual(current, next)) {
      setOwn(value, key, next);
      changed = true;
    }
  }
  return { value: changed ? value : base, changed };
}
