/** The column values the write statements send: documents and events. */
import type { EventRecord, WriteSet } from '../../model/records.js';
import { offBand } from '../event-band.js';

/**
 * The columns of `events` a write fills, in the order of `eventRow`, with their types. Like every
 * document, the event is written as JSON text to `raw` (json): nothing queries inside a document,
 * and PostgreSQL only checks json text where it parses jsonb into its binary form (about 13 µs of
 * its CPU per 800-character document on the development machine). `doc` (jsonb) holds the documents
 * of stores written by earlier versions (migrations.ts); writes clear it, reads take whichever is set.
 */
const EVENT_FIELDS = [
  ['id', 'text'],
  ['insert_time', 'timestamptz'],
  ['type', 'text'],
  ['source_id', 'text'],
  ['session_id', 'text'],
  ['profile_id', 'text'],
  ['client_id', 'text'],
  ['create_time', 'timestamptz'],
  ['off_band', 'boolean'],
  ['session_touch', 'boolean'],
  ['raw', 'json'],
] as const;
export const EVENT_COLUMNS: string[] = EVENT_FIELDS.map(([name]) => name);
export const EVENT_TYPES: string[] = EVENT_FIELDS.map(([, type]) => type);

/**
 * True when the event says when its session's latest request came (migrations.ts:
 * `session_touch`): its write set touches that session (a request that counts as the session's
 * activity without rewriting it) and the event is of that session and request.
 */
export function recordsTouch(ws: WriteSet, e: EventRecord): boolean {
  const touch = ws.touch;
  return touch !== undefined && e.session?.id === touch.id && e.metadata.time.insert >= touch.at;
}

/** An event's values for EVENT_COLUMNS; `touches`: recordsTouch. */
export function eventRow(e: EventRecord, touches: boolean): unknown[] {
  return [
    e.id,
    e.metadata.time.insert,
    e.type,
    e.source.id,
    e.session?.id ?? null,
    e.profile?.id ?? null,
    e.metadata.client_id ?? null,
    e.metadata.time.create ?? e.metadata.time.insert,
    offBand(e),
    touches,
    JSON.stringify(e),
  ];
}

/**
 * By client id (events without one first), each client id's first event first. Client ids are
 * inserted in this order everywhere, so that two transactions inserting the same ids wait for each
 * other in the same direction instead of deadlocking.
 */
export function byClientId(a: EventRecord, b: EventRecord): number {
  return compareClientIds(a.metadata.client_id ?? '', b.metadata.client_id ?? '');
}

/** The order of byClientId, on the client ids themselves. */
export function compareClientIds(x: string, y: string): number {
  return x < y ? -1 : x > y ? 1 : 0;
}
