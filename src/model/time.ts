/**
 * Times clients send (`sent_at`, an event's `timestamp`, the `since`/`until` of a listing): RFC 3339
 * date-times with an offset, read the same way by the request schemas and by the pipeline
 * (docs/api.md#event-time).
 */

/** 0001-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z: the times the service stores. */
export const MIN_TIME_MS = -62_135_596_800_000;
export const MAX_TIME_MS = 253_402_300_799_999;

const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * Milliseconds since the epoch of an RFC 3339 date-time with an offset (`2026-11-23T20:16:01.741Z`,
 * `2026-11-23T21:16:01+01:00`), or null: no offset, a field out of range (month 13, 30 February,
 * second 60), or a time outside the years 0001 to 9999 once in UTC. Digits past milliseconds are
 * cut off.
 */
export function parseTime(text: string): number | null {
  if (text.length > 40) return null;
  // A request's times are read twice, by its schema's format check and then by the pipeline: the
  // last few answers are kept.
  for (let i = 0; i < RECENT; i++) if (recentText[i] === text) return recentMs[i]!;
  const ms = readTime(text);
  recentText[next] = text;
  recentMs[next] = ms;
  next = (next + 1) % RECENT;
  return ms;
}

const RECENT = 4;
const recentText: (string | undefined)[] = new Array<string | undefined>(RECENT);
const recentMs: (number | null)[] = new Array<number | null>(RECENT).fill(null);
let next = 0;

function readTime(text: string): number | null {
  const m = DATE_TIME.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  let offset = 0;
  if (!m[8]) {
    const offsetHours = Number(m[10]);
    const offsetMinutes = Number(m[11]);
    if (offsetHours > 23 || offsetMinutes > 59) return null;
    offset = (m[9] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  }
  const date = new Date(0);
  // setUTCFullYear, unlike Date.UTC, takes years below 100 as they are.
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, Number((m[7] ?? '0').padEnd(3, '0').slice(0, 3)));
  const ms = date.getTime() - offset;
  return ms < MIN_TIME_MS || ms > MAX_TIME_MS ? null : ms;
}

/** The time as the service writes times: ISO 8601 in UTC with milliseconds. */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

/** The last reading clockText wrote, and its text. */
let lastMs = Number.NaN;
let lastText = '';

/**
 * A reading of the service's clock as the service writes times (isoTime). Readings of the same
 * millisecond share one text: V8 formats a date through `vsnprintf`, about a third of a microsecond,
 * and a busy service reads its clock several times a millisecond (each request at least twice).
 */
export function clockText(date: Date): string {
  const ms = date.getTime();
  if (ms !== lastMs) {
    lastText = date.toISOString();
    lastMs = ms;
  }
  return lastText;
}
