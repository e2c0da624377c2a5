/**
 * Stored events in commit order, for delivery: runs (migrations.ts) by number, and the events of a
 * run by index. A position is (run, index of the next event in it). Reads run on the service's
 * thread, on the reading connection, a few windows of runs at a time: never on the writer thread,
 * never long (a longer read returns what it has and where to go on).
 */
import type Database from 'better-sqlite3';
import type { EventRecord } from '../../model/records.js';
import { position, positionParts, type EventSelector, type EventSlice } from '../../model/destinations.js';
import { runEvents } from './reads.js';

/** Runs per window, and windows per read at most. */
const WINDOW = 1000;
const WINDOWS_PER_READ = 4;
/** Most bytes of events in one read (at least one event is always read). */
const MAX_SLICE_BYTES = 4 * 1024 * 1024;
/** Runs counted per step of a count, between which the thread does other work. */
const COUNT_STEP = 50_000;

interface RunRow {
  run: number;
  insert_time: string;
  types: string;
  ids: string;
  docs: string;
  /** The request context the run's records are merged with, when kept once (reads.ts). */
  context: string | null;
}

const MATCHING = `(@sources IS NULL OR source_id IN (SELECT value FROM json_each(@sources)))
  AND (@types IS NULL OR EXISTS (SELECT 1 FROM json_each(types) t WHERE t.value IN (SELECT value FROM json_each(@types))))`;

export function deliveryStatements(db: Database.Database) {
  return {
    maxRun: db.prepare('SELECT coalesce(max(run), 0) FROM event_runs').pluck(),
    window: db.prepare(
      `SELECT run, insert_time, types, ids, docs, context FROM event_runs WHERE run >= @start AND run < @end AND ${MATCHING} ORDER BY run`,
    ),
    one: db.prepare('SELECT run, insert_time, types, ids, docs, context FROM event_runs WHERE run = ?'),
    count: db
      .prepare(
        `SELECT coalesce(sum(CASE
            WHEN @types IS NULL THEN json_array_length(ids)
            WHEN NOT EXISTS (SELECT 1 FROM json_each(types) t WHERE t.value NOT IN (SELECT value FROM json_each(@types)))
              THEN json_array_length(ids)
            ELSE (SELECT count(*) FROM json_each(docs) d
                   WHERE json_extract(d.value, '$.type') IN (SELECT value FROM json_each(@types)))
          END), 0) FROM event_runs WHERE run >= @start AND run < @end AND ${MATCHING}`,
      )
      .pluck(),
    byId: db.prepare(
      'SELECT r.run, r.insert_time, r.types, r.ids, r.docs, r.context FROM event_ids i JOIN event_runs r ON r.run = i.run WHERE i.id = ?',
    ),
  };
}

type Statements = ReturnType<typeof deliveryStatements>;

/** The filter parameters of the statements: JSON lists, null for "any". */
function params(selector: EventSelector): [string | null, string | null] {
  return [
    selector.eventTypes.length ? JSON.stringify(selector.eventTypes) : null,
    selector.sourceIds.length ? JSON.stringify(selector.sourceIds) : null,
  ];
}

export function readSlice(s: Statements, selector: EventSelector, from: string, limit: number): EventSlice {
  const [types, sources] = params(selector);
  const wanted = selector.eventTypes.length ? new Set(selector.eventTypes) : null;
  const [major, minor] = positionParts(from);
  const first = Number(major);
  const head = (s.maxRun.get() as number) + 1;
  const slice = { ids: [] as string[], times: [] as string[], parts: [] as string[], bytes: 0 };
  let next = position(first, minor);
  for (let start = first, w = 0; start < head && w < WINDOWS_PER_READ; start += WINDOW, w++) {
    const end = Math.min(start + WINDOW, head);
    for (const row of s.window.iterate({ types, sources, start, end }) as Iterable<RunRow>) {
      const skip = row.run === first ? Number(minor) : 0;
      const stoppedAt = takeRun(row, skip, wanted, limit, slice);
      if (stoppedAt !== null) return done(slice, position(row.run, stoppedAt));
      if (slice.ids.length >= limit || slice.bytes >= MAX_SLICE_BYTES) {
        return done(slice, position(row.run + 1, 0));
      }
    }
    next = position(end, 0);
  }
  return done(slice, next);
}

interface Gathered {
  ids: string[];
  times: string[];
  parts: string[];
  /** Characters of JSON gathered. */
  bytes: number;
}

function done(slice: Gathered, next: string): EventSlice {
  return { ids: slice.ids, times: slice.times, json: slice.parts.join(','), next };
}

/**
 * Adds the run's matching events from index `skip` on, while the slice has room. Returns the index
 * of the first event left for later, or null when the whole run was taken.
 */
function takeRun(
  row: RunRow,
  skip: number,
  wanted: Set<string> | null,
  limit: number,
  slice: Gathered,
): number | null {
  const full = (size: number) =>
    slice.ids.length >= limit || (slice.ids.length > 0 && slice.bytes + size > MAX_SLICE_BYTES);
  const ids = JSON.parse(row.ids) as string[];
  const types = JSON.parse(row.types) as string[];
  const whole = skip === 0 && (wanted === null || types.every((t) => wanted.has(t)));
  if (whole && row.context === null && ids.length <= limit - slice.ids.length && !full(row.docs.length)) {
    // The run's JSON as it is stored, without parsing and writing it again.
    slice.ids.push(...ids);
    for (let i = 0; i < ids.length; i++) slice.times.push(row.insert_time);
    slice.parts.push(row.docs.slice(1, -1));
    slice.bytes += row.docs.length;
    return null;
  }
  const events = runEvents(row.docs, row.context);
  for (let i = skip; i < events.length; i++) {
    const e = events[i]!;
    if (wanted !== null && !wanted.has(e.type)) continue;
    const json = JSON.stringify(e);
    if (full(json.length)) return i;
    slice.ids.push(e.id);
    slice.times.push(row.insert_time);
    slice.parts.push(json);
    slice.bytes += json.length;
  }
  return null;
}

/** Matching events from `from` on, counted a step of runs at a time (other work runs between steps). */
export async function countFrom(s: Statements, selector: EventSelector, from: string): Promise<number> {
  const [types, sources] = params(selector);
  const wanted = selector.eventTypes.length ? new Set(selector.eventTypes) : null;
  const sourceSet = selector.sourceIds.length ? new Set(selector.sourceIds) : null;
  const [major, minor] = positionParts(from);
  let start = Number(major);
  let total = 0;
  if (Number(minor) > 0) {
    const row = s.one.get(start) as RunRow | undefined;
    if (row) {
      const events = (JSON.parse(row.docs) as EventRecord[]).slice(Number(minor));
      total += events.filter(
        (e) => (wanted === null || wanted.has(e.type)) && (sourceSet === null || sourceSet.has(e.source.id)),
      ).length;
    }
    start++;
  }
  const head = (s.maxRun.get() as number) + 1;
  for (; start < head; start += COUNT_STEP) {
    total += s.count.get({ types, sources, start, end: Math.min(start + COUNT_STEP, head) }) as number;
    if (start + COUNT_STEP < head) await new Promise((resolve) => setImmediate(resolve));
  }
  return total;
}

/** The stored events among `ids`, in that order. */
export function readIds(s: Statements, ids: string[]): Omit<EventSlice, 'next'> {
  const runs = new Map<number, { time: string; events: Map<string, EventRecord> }>();
  const out = { ids: [] as string[], times: [] as string[], parts: [] as string[] };
  for (const id of ids) {
    let found: { time: string; events: Map<string, EventRecord> } | undefined;
    for (const run of runs.values()) if (run.events.has(id)) found = run;
    if (!found) {
      const row = s.byId.get(id) as RunRow | undefined;
      if (!row) continue;
      found = runs.get(row.run);
      if (!found) {
        const events = runEvents(row.docs, row.context);
        found = { time: row.insert_time, events: new Map(events.map((e) => [e.id, e])) };
        runs.set(row.run, found);
      }
    }
    const event = found.events.get(id);
    if (!event) continue;
    out.ids.push(id);
    out.times.push(found.time);
    out.parts.push(JSON.stringify(event));
  }
  return { ids: out.ids, times: out.times, json: out.parts.join(',') };
}
