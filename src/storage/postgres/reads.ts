/** The listings of the PostgreSQL store: events and rejected requests, newest first. */
import type { EventRecord, RejectedRecord } from '../../model/records.js';
import { pageQuery, rejectedConditions, type Condition, type Dialect } from '../paging.js';
import type { EventFilter, EventPosition, RejectedFilter } from '../store.js';
import { eventOf } from '../documents.js';
import { insertWindow } from '../event-band.js';
import { docOf, type DocRow } from './statements.js';

export type Query = (text: string, values: unknown[]) => Promise<{ rows: DocRow[] }>;

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
  return (await query(sql, params)).rows.map((row) => docOf<T>(row)!);
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
    return (await page<EventRecord>(query, 'events', 'insert_time', conditions, limit, after)).map(eventOf);
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
  const first = pageQuery(dialect, 'events', 'insert_time', inBand, limit, after, 0, ', insert_time, id');
  const second = pageQuery(
    dialect,
    'events',
    'insert_time',
    offBand,
    limit,
    after,
    first.params.length,
    ', insert_time, id',
  );
  const sql = `SELECT doc, raw FROM ((${first.sql}) UNION ALL (${second.sql})) AS listed ORDER BY insert_time DESC, id DESC LIMIT ${limit}`;
  const { rows } = await query(sql, [...first.params, ...second.params]);
  return rows.map((row) => eventOf(docOf<EventRecord>(row)!));
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
