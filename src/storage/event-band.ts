/**
 * Listing events by `metadata.time.create` (`since`/`until`, docs/api.md#listing-events) without
 * reading the whole store, written once for both adapters. Nearly every event happened within
 * minutes of its insert time, so the events whose create time lies in [since, until) are found among
 * those inserted in [since - BAND, until + BAND), through the insert-time indexes the listing uses
 * anyway. The others, "off band", are marked when stored and kept in an index of their own, which
 * each listing reads beside the window.
 */
import type { EventRecord } from '../model/records.js';
import { isoTime, MAX_TIME_MS, MIN_TIME_MS } from '../model/time.js';
import type { EventFilter } from './store.js';

export const BAND_MS = 5 * 60_000;

/** True when the event happened more than BAND_MS before or after it was inserted. */
export function offBand(event: EventRecord): boolean {
  const { insert, create } = event.metadata.time;
  if (create === undefined || create === insert) return false;
  return Math.abs(Date.parse(create) - Date.parse(insert)) > BAND_MS;
}

/** The insert times that hold every in-band event of the create-time range; each side may be open. */
export interface InsertWindow {
  from: string | null;
  to: string | null;
}

/** The window of the filter's range, or null when the filter has no create-time range. */
export function insertWindow(filter: EventFilter): InsertWindow | null {
  if (filter.since === undefined && filter.until === undefined) return null;
  const bound = (time: string | undefined, shift: number) => {
    if (time === undefined) return null;
    const ms = Date.parse(time) + shift;
    return ms < MIN_TIME_MS || ms > MAX_TIME_MS ? null : isoTime(ms);
  };
  return { from: bound(filter.since, -BAND_MS), to: bound(filter.until, BAND_MS) };
}

/** True when the event matches the filter's create-time range (since included, until excluded). */
export function inCreateRange(event: EventRecord, filter: EventFilter): boolean {
  const create = event.metadata.time.create ?? event.metadata.time.insert;
  return (
    (filter.since === undefined || create >= filter.since) &&
    (filter.until === undefined || create < filter.until)
  );
}
