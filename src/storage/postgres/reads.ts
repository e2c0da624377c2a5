/** The listings of the PostgreSQL store: events and rejected requests, newest first. */
import type { EventRecord, RejectedRecord } from '../../model/records.js';
import { pageQuery, rejectedConditions, type Condition, type Dialect } from '../paging.js';
import type { EventFilter, EventPosition, RejectedFilter } from '../store.js';
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

export function listEvents(
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
  return page<EventRecord>(query, 'events', 'insert_time', conditions, limit, after);
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
