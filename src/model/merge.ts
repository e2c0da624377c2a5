import { isDeepStrictEqual } from 'node:util';
import type { JsonObject } from './records.js';

function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Sets an own property, even for keys like `__proto__`, so no input can reach a prototype. */
function setOwn(target: JsonObject, key: string, value: unknown): void {
  // Only `__proto__` is an accessor of Object.prototype: any other key assigns an own property.
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else target[key] = value;
}

/** A copy of `base` with its own properties, in their order. */
function copyOf(base: JsonObject): JsonObject {
  const value: JsonObject = {};
  for (const key of Object.keys(base)) setOwn(value, key, base[key]);
  return value;
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
  // The copy is made at the first difference: a patch that changes nothing (a returning visitor's
  // context) costs no copy.
  let value: JsonObject | null = null;
  for (const key of Object.keys(patch)) {
    const next = patch[key];
    const current = Object.prototype.hasOwnProperty.call(base, key) ? base[key] : undefined;
    if (isPlainObject(current) && isPlainObject(next)) {
      const merged = deepMerge(current, next);
      if (merged.changed) setOwn((value ??= copyOf(base)), key, merged.value);
    } else if (current === undefined || !isDeepStrictEqual(current, next)) {
      setOwn((value ??= copyOf(base)), key, next);
    }
  }
  return value ? { value, changed: true } : { value: base, changed: false };
}
