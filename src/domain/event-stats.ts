import { isoTime } from '../model/time.js';
import type { EventCounts, Store } from '../storage/store.js';

/** The window of `GET /events/stats` when none is asked for, and the longest one (docs/api.md#event-stats). */
export const STATS_DEFAULT_MS = 30 * 60_000;
export const STATS_MAX_MS = 24 * 3_600_000;
/** Event types counted by name: the most frequent of the window; the others are counted together. */
export const STATS_TOP_TYPES = 20;

const MINUTE_MS = 60_000;

export interface StatsWindow {
  /** Milliseconds since the epoch; `since` is at the start of a minute. */
  since: number;
  until: number;
}

/** What is wrong with an asked-for window, to be answered as a 422 naming the query field. */
export interface WindowProblem {
  field: 'since' | 'until';
  msg: string;
}

/**
 * The window of a stats request: `until` defaults to now, `since` to 30 minutes before `until`, and
 * `since` is moved back to the start of its minute so that its minute is counted whole. It must lie
 * before `until`, at most 24 hours before it.
 */
export function statsWindow(now: number, since?: number, until?: number): StatsWindow | WindowProblem {
  const end = until ?? now;
  const start = Math.floor((since ?? end - STATS_DEFAULT_MS) / MINUTE_MS) * MINUTE_MS;
  if (start >= end) return { field: since === undefined ? 'until' : 'since', msg: 'must be before `until`' };
  if (end - start > STATS_MAX_MS) {
    return { field: 'since', msg: 'must be at most 24 hours before `until`' };
  }
  return { since: start, until: end };
}

export interface EventStats {
  since: string;
  until: string;
  total: number;
  /** The most frequent types of the window, most frequent first, with their totals. */
  types: { type: string; total: number }[];
  /** The other types of the window, counted together: how many there are and their total. */
  other: { types: number; total: number };
  /** The minutes that have events, oldest first: `counts[i]` is the count of `types[i]`. */
  minutes: { minute: string; total: number; counts: number[]; other: number }[];
}

/** Events per minute and type in a window (docs/api.md#event-stats), counted by the store. */
export async function eventStats(
  store: Store,
  window: StatsWindow,
  filter: { sourceId?: string; type?: string },
): Promise<EventStats> {
  const since = isoTime(window.since);
  const until = isoTime(window.until);
  const counted = await store.countEvents({ since, until, ...filter, top: STATS_TOP_TYPES });
  return { since, until, ...shape(counted) };
}

/** The store's rows as series aligned on the types, most frequent first (then by name). */
function shape({ rows, otherTypes }: EventCounts): Omit<EventStats, 'since' | 'until'> {
  const totals = new Map<string, number>();
  let other = 0;
  for (const { type, count } of rows) {
    if (type === null) other += count;
    else totals.set(type, (totals.get(type) ?? 0) + count);
  }
  const types = [...totals]
    .map(([type, total]) => ({ type, total }))
    .sort((a, b) => b.total - a.total || (a.type < b.type ? -1 : a.type > b.type ? 1 : 0));
  const index = new Map(types.map(({ type }, i) => [type, i]));
  const minutes: EventStats['minutes'] = [];
  for (const { minute, type, count } of rows) {
    const at = isoTime(Date.parse(`${minute}:00Z`));
    let entry = minutes[minutes.length - 1];
    if (entry?.minute !== at) {
      entry = { minute: at, total: 0, counts: types.map(() => 0), other: 0 };
      minutes.push(entry);
    }
    entry.total += count;
    if (type === null) entry.other += count;
    else entry.counts[index.get(type)!]! += count;
  }
  const total = types.reduce((sum, t) => sum + t.total, other);
  return { total, types, other: { types: otherTypes, total: other }, minutes };
}
