/**
 * Listings newest first, written once for both adapters: the SQL of one page of documents ordered
 * by (time, id) descending, and the conditions of the rejected-request filter. Each adapter says how
 * its SQL dialect differs.
 */
import type { EventPosition, RejectedFilter } from './store.js';

export interface Dialect {
  /** The placeholder of the n-th parameter (1-based): `?` or `$n`. */
  param(n: number): string;
  /** The columns that hold a document. */
  docColumns: string;
  /** The type cast of a time parameter, if the dialect needs one (`::timestamptz`). */
  timeCast: string;
  /** The condition "the JSON array/array column of event types holds the parameter". */
  hasEventType(param: string): string;
}

/** A condition with one parameter: `column = {}` where `{}` stands for the parameter (or none). */
export type Condition = [sql: string, value: unknown];

export interface PageQuery {
  sql: string;
  params: unknown[];
}

/**
 * The statement of one page of `table`, newest first by (`timeColumn`, id), after `after`. Its
 * parameters are numbered after `paramsBefore` others (for a statement made of several pages);
 * `extraColumns` are selected beside the document's.
 */
export function pageQuery(
  dialect: Dialect,
  table: string,
  timeColumn: string,
  conditions: Condition[],
  limit: number,
  after: EventPosition | null,
  paramsBefore = 0,
  extraColumns = '',
): PageQuery {
  const where: string[] = [];
  const params: unknown[] = [];
  const next = (value: unknown) => {
    params.push(value);
    return dialect.param(paramsBefore + params.length);
  };
  // A condition without `{}` takes no parameter (its value is not used).
  for (const [sql, value] of conditions)
    where.push(sql.includes('{}') ? sql.replace('{}', next(value)) : sql);
  if (after) {
    const time = next(after.insert) + dialect.timeCast;
    where.push(`(${timeColumn}, id) < (${time}, ${next(after.id)})`);
  }
  const filter = where.length ? `WHERE ${where.join(' AND ')} ` : '';
  return {
    sql: `SELECT ${dialect.docColumns}${extraColumns} FROM ${table} ${filter}ORDER BY ${timeColumn} DESC, id DESC LIMIT ${next(limit)}`,
    params,
  };
}

/** The conditions of a rejected-request listing. */
export function rejectedConditions(dialect: Dialect, filter: RejectedFilter): Condition[] {
  const conditions: Condition[] = [];
  if (filter.sourceId !== undefined) conditions.push(['source_id = {}', filter.sourceId]);
  if (filter.eventType !== undefined) conditions.push([dialect.hasEventType('{}'), filter.eventType]);
  return conditions;
}
