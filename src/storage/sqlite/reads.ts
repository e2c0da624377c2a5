/**
 * Reading events out of runs (migrations.ts): a run is one row holding the consecutive events of a
 * write set that share their insert time, source, session and profile.
 */
import type Database from 'better-sqlite3';
import type { EventRecord } from '../../model/records.js';
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

/**
 * The statements listing the runs that may hold matching events, each newest first by (insert
 * time, run). A session filter takes two: the runs naming the stored session by its `seq`, and
 * those naming a session that was not stored (yet) by its id.
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
  const query = (extra: string[], extraParams: unknown[]): RunQuery => {
    const all = [...where, ...extra];
    return {
      sql: `SELECT r.insert_time AS time, r.run, r.docs FROM ${from} ${all.length ? `WHERE ${all.join(' AND ')}` : ''} ORDER BY ${order}`,
      params: [...params, ...extraParams],
    };
  };
  if (filter.sessionId === undefined) return [query([], [])];
  return [
    query(['r.session_seq = (SELECT seq FROM sessions WHERE id = ?)'], [filter.sessionId]),
    query(['r.session_seq IS NULL', 'r.session_id IS NOT NULL', 'r.session_id = ?'], [filter.sessionId]),
  ];
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
      for (const e of JSON.parse(row.docs) as EventRecord[]) {
        if (filter.type !== undefined && e.type !== filter.type) continue;
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

/** The event `id` from the docs of its run. */
export function eventOfRun(docs: string | undefined, id: string): EventRecord | null {
  if (docs === undefined) return null;
  return (JSON.parse(docs) as EventRecord[]).find((e) => e.id === id) ?? null;
}
