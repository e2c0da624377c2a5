/**
 * Events per minute and type, for `Store.countEvents` (docs/api.md#event-stats), read from the runs
 * (migrations.ts). A run of one type counts its ids without reading its records; only the runs
 * holding several types have their records' types read one by one.
 */
import type { EventCountQuery } from '../store.js';

export interface CountStatement {
  sql: string;
  params: unknown[];
}

/**
 * One statement: the runs inserted in the range (through the insert-time index), the `top` types by
 * count, then the counts per minute with the other types as one (type null), and in every row how
 * many types that one holds. Insert times are ISO 8601 UTC text: the minute is their first 16
 * characters.
 */
export function countEventsStatement(q: EventCountQuery): CountStatement {
  const params: unknown[] = [];
  const runs = (alias: string) => {
    const where = [`${alias}.insert_time >= ?`, `${alias}.insert_time < ?`];
    params.push(q.since, q.until);
    if (q.sourceId !== undefined) {
      where.push(`${alias}.source_id = ?`);
      params.push(q.sourceId);
    }
    return where.join(' AND ');
  };
  const single = `SELECT substr(r.insert_time, 1, 16) AS minute, r.types ->> '$[0]' AS type,
      json_array_length(r.ids) AS n
    FROM event_runs r WHERE ${runs('r')} AND json_array_length(r.types) = 1`;
  const mixed = `SELECT substr(r.insert_time, 1, 16), e.value ->> '$.type', 1
    FROM event_runs r, json_each(r.docs) e WHERE ${runs('r')} AND json_array_length(r.types) > 1`;
  let typed = '';
  if (q.type !== undefined) {
    typed = ' WHERE type = ?';
    params.push(q.type);
  }
  params.push(q.top, q.top);
  const sql = `WITH w AS MATERIALIZED (SELECT * FROM (${single} UNION ALL ${mixed})${typed}),
    totals AS (SELECT type, sum(n) AS n FROM w GROUP BY type),
    top AS (SELECT type FROM totals ORDER BY n DESC, type LIMIT ?)
    SELECT minute, CASE WHEN type IN (SELECT type FROM top) THEN type END AS type, sum(n) AS count,
      (SELECT max(count(*) - ?, 0) FROM totals) AS other_types
    FROM w GROUP BY 1, 2 ORDER BY 1, 2`;
  return { sql, params };
}
