/**
 * Stored events in commit order, for delivery: by (xid, seq), the transaction that stored an event
 * and its place in the sequence. A position is (xid, seq) of the next event. Only events of
 * transactions older than the oldest one still running are read (migrations.ts explains why).
 * Events that name a context kept once are sent merged with it, as they were built (contexts.ts).
 */
import { position, positionParts, type EventSelector, type EventSlice } from '../../model/destinations.js';
import type { EventRecord } from '../../model/records.js';
import { mergeContext } from '../contexts.js';
import { contextsOf } from './reads.js';

export type Query = <R>(text: string, values: unknown[]) => Promise<{ rows: R[]; rowCount?: number | null }>;

const MATCHING = `xid IS NOT NULL AND (xid, seq) >= ($1::xid8, $2::bigint)
  AND ($3::text[] IS NULL OR type = ANY($3::text[])) AND ($4::text[] IS NULL OR source_id = ANY($4::text[]))`;

/** Most bytes of events in one read (at least one event is always read). */
export const MAX_SLICE_BYTES = 4 * 1024 * 1024;

/** An event's JSON and the size of the context kept once it names (0 for none), for the budget. */
const EVENT_JSON = `coalesce(doc::text, raw::text) AS json, context_id,
  CASE WHEN context_id IS NULL THEN 0 ELSE coalesce((SELECT size FROM event_contexts c WHERE c.id = events.context_id), 0) END
    AS context_size`;

const READ = `SELECT head, xid, seq, id, insert_time, json, context_id, fetched FROM (
    SELECT h.xmin::text AS head, e.xid::text AS xid, e.seq::text AS seq, e.id, e.insert_time, e.json,
      e.context_id, e.xid AS xid_order, e.seq AS seq_order,
      count(e.id) OVER () AS fetched,
      coalesce(sum(octet_length(e.json) + e.context_size) OVER (ORDER BY e.xid, e.seq), 0)
        - coalesce(octet_length(e.json) + e.context_size, 0) AS before
    FROM (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin) h
    LEFT JOIN LATERAL (
      SELECT xid, seq, id, insert_time, ${EVENT_JSON} FROM events
      WHERE ${MATCHING} AND xid < h.xmin ORDER BY xid, seq LIMIT $5
    ) e ON true
  ) r WHERE before < ${MAX_SLICE_BYTES}
  ORDER BY xid_order, seq_order`;

const COUNT = `SELECT count(*)::bigint AS n FROM events WHERE ${MATCHING}`;

const BY_ID = `SELECT id, insert_time, ${EVENT_JSON} FROM events WHERE id = ANY($1::text[])`;

interface SliceRow {
  head: string;
  /** Rows read before the byte budget cut them. */
  fetched: string;
  xid: string | null;
  seq: string | null;
  id: string;
  insert_time: Date;
  json: string;
  context_id: string | null;
}

/** The rows' JSON, each event merged with the context kept once it names (one more statement if any). */
async function jsonOf(query: Query, rows: { json: string; context_id: string | null }[]): Promise<string[]> {
  const contexts = await contextsOf(query, rows);
  return rows.map((row) => {
    const context = row.context_id === null ? undefined : contexts.get(row.context_id);
    if (!context) return row.json;
    return JSON.stringify(mergeContext([JSON.parse(row.json) as EventRecord], context)[0]);
  });
}

function params(selector: EventSelector, from: string): unknown[] {
  const [xid, seq] = positionParts(from);
  return [
    xid,
    seq,
    selector.eventTypes.length ? selector.eventTypes : null,
    selector.sourceIds.length ? selector.sourceIds : null,
  ];
}

export async function readSlice(
  query: Query,
  selector: EventSelector,
  from: string,
  limit: number,
): Promise<EventSlice> {
  const { rows } = await query<SliceRow>(READ, [...params(selector, from), limit]);
  const events = rows.filter((row) => row.xid !== null);
  const last = events[events.length - 1];
  let next: string;
  const cut = events.length < Number(rows[0]?.fetched ?? 0);
  if (last && (events.length >= limit || cut)) next = position(last.xid!, BigInt(last.seq!) + 1n);
  else {
    // Everything before the oldest running transaction was read.
    const head = position(rows[0]?.head ?? '0', 0);
    next = head > from ? head : from;
  }
  return {
    ids: events.map((row) => row.id),
    times: events.map((row) => row.insert_time.toISOString()),
    json: (await jsonOf(query, events)).join(','),
    next,
  };
}

export async function countFrom(query: Query, selector: EventSelector, from: string): Promise<number> {
  const { rows } = await query<{ n: string }>(COUNT, params(selector, from));
  return Number(rows[0]?.n ?? 0);
}

export async function readIds(query: Query, ids: string[]): Promise<Omit<EventSlice, 'next'>> {
  const { rows } = await query<{ id: string; insert_time: Date; json: string; context_id: string | null }>(
    BY_ID,
    [ids],
  );
  const byId = new Map(rows.map((row) => [row.id, row]));
  const found = ids.map((id) => byId.get(id)).filter((row) => row !== undefined);
  return {
    ids: found.map((row) => row.id),
    times: found.map((row) => row.insert_time.toISOString()),
    json: (await jsonOf(query, found)).join(','),
  };
}
