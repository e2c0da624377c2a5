/**
 * Reading events out of runs (migrations.ts): a run is one row holding the consecutive events of a
 * write set that share their insert time, source, session and profile, and the request context they
 * are merged with when it is kept once (src/storage/contexts.ts).
 */
import type Database from 'better-sqlite3';
import type { EventRecord, JsonObject } from '../../model/records.js';
import { mergeContext } from '../contexts.js';
import { eventOf } from '../documents.js';
import { inCreateRange, insertWindow } from '../event-band.js';
import type { EventFilter, EventPosition } from '../store.js';

type Statement = Database.Statement<unknown[], unknown>;

const RUN_FILTERS: [keyof EventFilter, string][] = [
  ['profileId', 'r.profile_id'],
  ['sourceId', 'r.source_id'],
];

interface ListedRun {
  time: string;
  run: number;
  docs: string;
  context: string | null;
}

/** The records of a run as the events were built: merged with the run's context when it has one. */
export function runEvents(docs: string, context: string | null): EventRecord[] {
  const events = JSON.parse(docs) as EventRecord[];
  return context === null ? events : mergeContext(events, JSON.parse(context) as JsonObject);
}

/** Newest first: by insert time, then by id (ids compared as JavaScript strings). */
function before(a: EventRecord, time: string, id: string): boolean {
  const t = a.metadata.time.insert;
  return t < time || (t === time && a.id < id);
}

function newestFirst(a: EventRecord, b: EventRecord): number {
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

export interface RunQuery {
  sql: string;
  params: unknown[];
}

type Part = [conditions: string[], params: unknown[]];

/**
 * The statements listing the runs that may hold matching events, each newest first by (insert
 * time, run). A session filter takes two: the runs naming the stored session by its `seq`, and
 * those naming a session that was not stored (yet) by its id. A create-time range takes two too:
 * the in-band runs inserted in its window, and the off-band runs (src/storage/event-band.ts).
 */
export function runQueries(filter: EventFilter, after: EventPosition | null): RunQuery[] {
  const where: string[] = [];
  const params: unknown[] = [];
  let from = 'event_runs r';
  let order = 'r.insert_time DESC, r.run DESC';
  let time = 'r.insert_time';
  if (filter.type !== undefined) {
    // The runs holding the type, through their own index (type, insert_time, run).
    from = 'event_run_types t JOIN event_runs r ON r.run = t.run';
    where.push('t.type = ?');
    params.push(filter.type);
    time = 't.insert_time';
    order = 't.insert_time DESC, t.run DESC';
  }
  if (filter.clientId !== undefined) {
    from += ' JOIN event_client_ids c ON c.run = r.run';
    where.push('c.client_id = ?');
    params.push(filter.clientId);
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
  const sessions: Part[] =
    filter.sessionId === undefined
      ? [[[], []]]
      : [
          [['r.session_seq = (SELECT seq FROM sessions WHERE id = ?)'], [filter.sessionId]],
          [['r.session_seq IS NULL', 'r.session_id IS NOT NULL', 'r.session_id = ?'], [filter.sessionId]],
        ];
  const window = insertWindow(filter);
  const bands: Part[] = [[[], []]];
  if (window) {
    const inBand: Part = [['r.oob = 0'], []];
    if (window.from !== null) {
      inBand[0].push(`${time} >= ?`);
      inBand[1].push(window.from);
    }
    if (window.to !== null) {
      inBand[0].push(`${time} < ?`);
      inBand[1].push(window.to);
    }
    bands.splice(0, 1, inBand, [['r.oob = 1'], []]);
  }
  const queries: RunQuery[] = [];
  for (const [sessionWhere, sessionParams] of sessions) {
    for (const [bandWhere, bandParams] of bands) {
      const all = [...where, ...sessionWhere, ...bandWhere];
      queries.push({
        sql: `SELECT r.insert_time AS time, r.run, r.docs, r.context FROM ${from} ${all.length ? `WHERE ${all.join(' AND ')}` : ''} ORDER BY ${order}`,
        params: [...params, ...sessionParams, ...bandParams],
      });
    }
  }
  return queries;
}

/** Whether an event of a listed run matches what its run's columns could not tell. */
function matches(e: EventRecord, filter: EventFilter): boolean {
  if (filter.type !== undefined && e.type !== filter.type) return false;
  if (filter.clientId !== undefined && e.metadata.client_id !== filter.clientId) return false;
  return filter.since === undefined && filter.until === undefined ? true : inCreateRange(e, filter);
}

/** Rows of several sources, each newest first by (time, run), merged into one such order. */
function* merged(sources: Iterator<ListedRun>[]): Generator<ListedRun> {
  const heads = sources.map((it) => it.next());
  for (;;) {
    let best = -1;
    for (let i = 0; i < heads.length; i++) {
      const head = heads[i]!;
      if (head.done) continue;
      const top = best < 0 ? undefined : (heads[best]!.value as ListedRun);
      const row = head.value as ListedRun;
      if (!top || row.time > top.time || (row.time === top.time && row.run > top.run)) best = i;
    }
    if (best < 0) return;
    yield heads[best]!.value as ListedRun;
    heads[best] = sources[best]!.next();
  }
}

/**
 * One page of events from the runs the statements yield. Runs of one insert time may interleave by
 * id, so each such group is gathered and sorted before it is paged.
 */
export function pageOfRuns(
  queries: { statement: Statement; params: unknown[] }[],
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
  const sources = queries.map(
    ({ statement, params }) => statement.iterate(...params)[Symbol.iterator]() as Iterator<ListedRun>,
  );
  try {
    for (const row of merged(sources)) {
      if (row.time !== groupTime) {
        flush();
        if (page.length === limit) break;
        groupTime = row.time;
      }
      for (const doc of runEvents(row.docs, row.context)) {
        const e = eventOf(doc);
        if (!matches(e, filter)) continue;
        if (after && !before(e, after.insert, after.id)) continue;
        group.push(e);
      }
    }
    flush();
  } finally {
    // Statements stopped early are reset, so that their connection can be used again.
    for (const it of sources) it.return?.();
  }
  return page;
}

/** The event `id` from its run's row (docs and context), if any. */
export function eventOfRun(
  row: [docs: string, context: string | null] | undefined,
  id: string,
): EventRecord | null {
  if (row === undefined) return null;
  const event = (JSON.parse(row[0]) as EventRecord[]).find((e) => e.id === id);
  if (!event) return null;
  return eventOf(row[1] === null ? event : mergeContext([event], JSON.parse(row[1]) as JsonObject)[0]!);
}
