import { randomUUID } from 'node:crypto';

/**
 * A time-ordered UUID (version 7 layout: 48-bit Unix milliseconds, then random bits). Ids made close
 * in time sort together, so the store appends to its indexes instead of writing all over them.
 * Built on randomUUID (buffered entropy), which is far cheaper than drawing random bytes per id.
 */
export function timeOrderedId(now: number = Date.now()): string {
  const time = now.toString(16).padStart(12, '0');
  const random = randomUUID(); // xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx: keep from the 13th hex digit on
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${random.slice(15)}`;
}
