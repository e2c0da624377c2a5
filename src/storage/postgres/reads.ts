/** The listings of the PostgreSQL store: events and rejected requests, newest first. */
import type { EventRecord, JsonObject, RejectedRecord } from '../../model/records.js';
import { mergeContext } from '../contexts.js';
import { pageQuery, rejectedConditions, type Condition, type Dialect } from '../paging.js';
import type { EventFilter, EventPosition, RejectedFilter } from '../store.js';
import { eventOf } from '../documents.js';
import { insertWindow } from '../event-band.js';
import type { Query } from './delivery-reads.js';
import { docOf, type DocRow } from './statements.js';

/** An event's row: its document, and the context kept once it is merged with (migrations.ts), if any. */
export interface EventRow extends DocRow {
  context_id: string | null;
}

const CONTEXTS = 'SELECT id, doc, raw FROM event_contexts WHERE id = ANY($1::text[])';

/** The contexts kept once that these rows name, by id: one statement, none when no row names one. */
export async function contextsOf(
  query: Query,
  rows: { context_id: string | null }[],
): Promise<Map<string, JsonObject>> {
  const ids = new Set<string>();
  for (const row of rows) if (row.context_id !== null) ids.add(row.context_id);
  const contexts = new Map<string, JsonObject>();
  if (ids.size === 0) return contexts;
  const found = await query<DocRow & { id: string }>(CONTEXTS, [[...ids]]);
  for (const row of found.rows) contexts.set(row.id, docOf<JsonObject>(row)!);
  return contexts;
}

/** The events of rows as the stores answer them, merged with the contexts they name. */
export async function eventsOf(query: Query, rows: EventRow[]): Promise<EventRecord[]> {
  const contexts = await contextsOf(query, rows);
  return rows.map((row) => {
    const event = docOf<EventRecord>(row)!;
    const context = row.context_id === null ? undefined : contexts.get(row.context_id);
    return eventOf(context ? mergeContext([event], context)[0]! : event);
  });
}

const dialect: Dialect = {
  param: (n) => `$${n}`,
  docColumns: 'doc, raw',
  timeCast: '::timestamptz',
  hasEventType: (param) => `event_types @> ARRAY[${param}::text]`,
};

const FILTER_COLUMNS: [keyof EventFilter, string][] = [
  ['profileId', 'profile_id'],
  ['sessionId', 'session_id'],
  ['type', 'type'],
  ['sourceId', 'source_id'],
  ['clientId', 'client_id'],
];

async function page<T>(
  query: Query,
  table: string,
  timeColumn: string,
  conditions: Condition[],
  limit: number,
  after: EventPosition | null,
): Promise<T[]> {
  const { sql, params } = pageQuery(dialect, table, timeColumn, conditions, limit, after);
  return (await query<DocRow>(sql, params)).rows.map((row) => docOf<T>(row)!);
}

export async function listEvents(
  query: Query,
  filter: EventFilter,
  limit: number,
  after: EventPosition | null,
): Promise<EventRecord[]> {
  const conditions: Condition[] = [];
  for (const [key, column] of FILTER_COLUMNS) {
    const value = filter[key];
    if (value !== undefined) conditions.push([`${column} = {}`, value]);
  }
  const window = insertWindow(filter);
  if (!window) {
    const { sql, params } = pageQuery(
      dialect,
      'events',
      'insert_time',
      conditions,
      limit,
      after,
      0,
      ', context_id',
    );
    return eventsOf(query, (await query<EventRow>(sql, params)).rows);
  }
  // A create-time range: the in-band events inserted in its window, and the off-band ones, each
  // newest first, merged (src/storage/event-band.ts).
  const create = 'coalesce(create_time, insert_time)';
  if (filter.since !== undefined) conditions.push([`${create} >= {}::timestamptz`, filter.since]);
  if (filter.until !== undefined) conditions.push([`${create} < {}::timestamptz`, filter.until]);
  const inBand: Condition[] = [...conditions, ['NOT off_band', null]];
  if (window.from !== null) inBand.push(['insert_time >= {}::timestamptz', window.from]);
  if (window.to !== null) inBand.push(['insert_time < {}::timestamptz', window.to]);
  const offBand: Condition[] = [...conditions, ['off_band', null]];
  const extra = ', insert_time, id, context_id';
  const first = pageQuery(dialect, 'events', 'insert_time', inBand, limit, after, 0, extra);
  const second = pageQuery(
    dialect,
    'events',
    'insert_time',
    offBand,
    limit,
    after,
    first.params.length,
    extra,
  );
  const sql = `SELECT doc, raw, context_id FROM ((${first.sql}) UNION ALL (${second.sql})) AS listed ORDER BY insert_time DESC, id DESC LIMIT ${limit}`;
  return eventsOf(query, (await query<EventRow>(sql, [...first.params, ...second.params])).rows);
}

export function listRejected(
  query: Query,
  filter: RejectedFilter,
  limit: number,
  after: EventPosition | null,
): Promise<RejectedRecord[]> {
  const conditions = rejectedConditions(dialect, filter);
  return page<RejectedRecord>(query, 'rejected', 'time', conditions, limit, after);
}
