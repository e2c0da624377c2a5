import { randomUUID } from 'node:crypto';

/**
 * A time-ordered UUID (version 7 layout: 48-bit Unix milliseconds, then random bits). Ids made close
 * in time sort together, so the store appends to its indexes instead of writing all over them.
 * Built on randomUUID (buffered entropy), which is far cheaper than drawing random bytes per id.
 */
export function timeOrderedId(now: number = Date.now()): string {
  // randomUUID() is xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx: keep from the 13th hex digit on.
  return timePrefix(now) + randomUUID().slice(15);
}

let prefixMs = -1;
let prefix = '';

/** `tttttttt-tttt-7` for a millisecond; made once per millisecond, as ids come many at a time. */
function timePrefix(ms: number): string {
  if (ms !== prefixMs) {
    const time = ms.toString(16).padStart(12, '0');
    prefix = `${time.slice(0, 8)}-${time.slice(8, 12)}-7`;
    prefixMs = ms;
  }
  return prefix;
}
