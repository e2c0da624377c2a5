/** Events per minute and type, for `Store.countEvents` (docs/api.md#event-stats). */
import type { EventCountQuery, EventCounts } from '../store.js';

export type CountQuery = (
  text: string,
  values: unknown[],
) => Promise<{ rows: { minute: string; type: string | null; count: number; other_types: number }[] }>;

/**
 * One statement: the events inserted in the range (through the insert-time index), the `top` types
 * by count, then the counts per minute with the other types as one (type null). The minute is cut
 * from the insert time in UTC.
 */
export async function countEvents(query: CountQuery, q: EventCountQuery): Promise<EventCounts> {
  const values: unknown[] = [q.since, q.until, q.top];
  const where = ['insert_time >= $1::timestamptz', 'insert_time < $2::timestamptz'];
  if (q.sourceId !== undefined) where.push(`source_id = $${values.push(q.sourceId)}`);
  if (q.type !== undefined) where.push(`type = $${values.push(q.type)}`);
  const text = `WITH w AS MATERIALIZED (
      SELECT to_char(insert_time AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI') AS minute, type
        FROM events WHERE ${where.join(' AND ')}),
    totals AS (SELECT type, count(*) AS n FROM w GROUP BY type),
    top AS (SELECT type FROM totals ORDER BY n DESC, type LIMIT $3)
    SELECT minute, CASE WHEN type IN (SELECT type FROM top) THEN type END AS type, count(*)::int AS count,
      (SELECT greatest(count(*) - $3, 0) FROM totals)::int AS other_types
    FROM w GROUP BY 1, 2 ORDER BY 1, 2`;
  const { rows } = await query(text, values);
  return {
    rows: rows.map(({ minute, type, count }) => ({ minute, type, count })),
    otherTypes: rows[0]?.other_types ?? 0,
  };
}
