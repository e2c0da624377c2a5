/**
 * Reading events out of runs (migrations.ts): a run is one row holding the consecutive events of a
 * write set that share their insert time, source, session and profile.
 */
import type Database from 'better-sqlite3';
import type { EventRecord } from '../../domain/records.js';
import type { EventFilter, EventPosition } from '../store.js';

type Statement = Database.Statement<unknown[], unknown>;

const RUN_FILTERS: [keyof EventFilter, string][] = [
  ['profileId', 'r.profile_id'],
  ['sessionId', 'r.session_id'],
  ['sourceId', 'r.source_id'],
];

/** Newest first: by insert time, then by id (ids compared as JavaScript strings). */
function before(a: EventRecord, time: string, id: string): boolean {
  const t = a.metadata.time.insert;
  return t < time || (t === time && a.id < id);
}

function newestFirst(a: EventRecord, b: EventRecord): number {
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/** The statement listing the runs that may hold matching events, newest first, and its parameters. */
export function runQuery(
  filter: EventFilter,
  after: EventPosition | null,
): { sql: string; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  let from = 'event_runs r';
  let time = 'r.insert_time';
  let order = 'r.insert_time DESC, r.run DESC';
  if (filter.type !== undefined) {
    // The runs holding the type, through their own index (type, insert_time, run).
    from = 'event_run_types t JOIN event_runs r ON r.run = t.run';
    where.push('t.type = ?');
    params.push(filter.type);
    time = 't.insert_time';
    order = 't.insert_time DESC, t.run DESC';
  }
  for (const [key, column] of RUN_FILTERS) {
    const value = filter[key];
    if (value === undefined) continue;
    where.push(`${column} = ?`);
    params.push(value);
  }
  if (after) {
    where.push(`${time} <= ?`);
    params.push(after.insert);
  }
  const sql = `SELECT r.insert_time AS time, r.docs FROM ${from} ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY ${order}`;
  return { sql, params };
}

/**
 * One page of events from the runs `statement` yields newest first. Runs of one insert time may
 * interleave by id, so each such group is gathered and sorted before it is paged.
 */
export function pageOfRuns(
  statement: Statement,
  params: unknown[],
  filter: EventFilter,
  limit: number,
  after: EventPosition | null,
): EventRecord[] {
  const page: EventRecord[] = [];
  let group: EventRecord[] = [];
  let groupTime: string | null = null;
  const flush = () => {
    group.sort(newestFirst);
    for (const e of group) {
      if (page.length === limit) break;
      page.push(e);
    }
    group = [];
  };
  for (const row of statement.iterate(...params) as Iterable<{ time: string; docs: string }>) {
    if (row.time !== groupTime) {
      flush();
      if (page.length === limit) break;
      groupTime = row.time;
    }
    for (const e of JSON.parse(row.docs) as EventRecord[]) {
      if (filter.type !== undefined && e.type !== filter.type) continue;
      if (after && !before(e, after.insert, after.id)) continue;
      group.push(e);
    }
  }
  flush();
  return page;
}

/** The event `id` from the docs of its run. */
export function eventOfRun(docs: string | undefined, id: string): EventRecord | null {
  if (docs === undefined) return null;
  return (JSON.parse(docs) as EventRecord[]).find((e) => e.id === id) ?? null;
}
