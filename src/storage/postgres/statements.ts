/**
 * The SQL of the PostgreSQL store: static statements, prepared once per connection (by name), and
 * how values and documents cross to and from them.
 */
import { announcing } from './notify.js';

/**
 * PostgreSQL text cannot hold U+0000. In ids and other key values (never in documents, where JSON
 * escapes it) it stands as U+FFFD, the same way on writes and lookups, so such a value is stored and
 * found instead of failing the request.
 */
export function storable(value: unknown): unknown {
  if (typeof value === 'string') return value.includes('\0') ? value.replaceAll('\0', '\uFFFD') : value;
  if (Array.isArray(value)) return value.map(storable);
  return value;
}

export interface DocRow {
  doc: unknown;
  raw: unknown;
}

export function docOf<T>(row: DocRow | undefined): T | null {
  if (!row) return null;
  return (row.doc ?? row.raw) as T;
}

/** Static statements, prepared once per connection (by name). */
export const SQL = {
  putSource: {
    name: 'put-source',
    text: announcing(
      'source',
      'INSERT INTO sources (id, doc, raw) VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc, raw = excluded.raw',
      'id',
    ),
  },
  getSource: { name: 'get-source', text: 'SELECT doc, raw FROM sources WHERE id = $1' },
  listSources: { name: 'list-sources', text: 'SELECT doc, raw FROM sources ORDER BY id' },
  deleteSource: {
    name: 'delete-source',
    text: announcing('source', 'DELETE FROM sources WHERE id = $1', 'id'),
  },
  getSession: {
    name: 'get-session',
    text: 'SELECT doc, raw, version, update_time FROM sessions WHERE id = $1',
  },
  // The sessions a batch uses without rewriting them, locked in id order (as profiles are, so that
  // batches of several processes cannot deadlock on them), then given the time of their latest request.
  lockTouchedSessions: {
    name: 'lock-touched-sessions',
    text: 'SELECT id FROM sessions WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE',
  },
  touchSessions: {
    name: 'touch-sessions',
    text: `UPDATE sessions s SET update_time = t.at FROM unnest($1::text[], $2::timestamptz[]) AS t(id, at)
      WHERE s.id = t.id AND (s.update_time IS NULL OR s.update_time < t.at)`,
  },
  getProfile: { name: 'get-profile', text: 'SELECT doc, raw FROM profiles WHERE id = $1' },
  lockProfiles: {
    name: 'lock-profiles',
    text: 'SELECT id, doc, raw FROM profiles WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE',
  },
  lockProfile: { name: 'lock-profile', text: 'SELECT doc, raw FROM profiles WHERE id = $1 FOR UPDATE' },
  getEvent: { name: 'get-event', text: 'SELECT doc, raw FROM events WHERE id = $1' },
  eraseSessionEvents: {
    name: 'erase-session-events',
    text: 'DELETE FROM events WHERE session_id IN (SELECT id FROM sessions WHERE profile_id = $1)',
  },
  eraseProfileEvents: { name: 'erase-profile-events', text: 'DELETE FROM events WHERE profile_id = $1' },
  eraseSessions: { name: 'erase-sessions', text: 'DELETE FROM sessions WHERE profile_id = $1' },
  eraseProfile: { name: 'erase-profile', text: 'DELETE FROM profiles WHERE id = $1' },
  putEventType: {
    name: 'put-event-type',
    text: announcing(
      'event_type',
      'INSERT INTO event_types (event_type, doc) VALUES ($1, $2) ON CONFLICT (event_type) DO UPDATE SET doc = excluded.doc',
      'event_type',
    ),
  },
  getEventType: { name: 'get-event-type', text: 'SELECT doc FROM event_types WHERE event_type = $1' },
  listEventTypes: { name: 'list-event-types', text: 'SELECT doc FROM event_types ORDER BY event_type' },
  deleteEventType: {
    name: 'delete-event-type',
    text: announcing('event_type', 'DELETE FROM event_types WHERE event_type = $1', 'event_type'),
  },
  putRejected: {
    name: 'put-rejected',
    text: `INSERT INTO rejected (id, time, source_id, event_types, doc, raw, size) VALUES ($1, $2, $3, $4, $5, $6, $7)
      ON CONFLICT (id) DO UPDATE SET time = excluded.time, source_id = excluded.source_id,
        event_types = excluded.event_types, doc = excluded.doc, raw = excluded.raw, size = excluded.size`,
  },
  // Retention: the oldest events, skipping rows another process is deleting at the same moment.
  deleteEventsBefore: {
    name: 'delete-events-before',
    text: `DELETE FROM events WHERE id IN (
      SELECT id FROM events WHERE insert_time < $1 ORDER BY insert_time LIMIT $2 FOR UPDATE SKIP LOCKED)`,
  },
  getRejected: { name: 'get-rejected', text: 'SELECT doc, raw FROM rejected WHERE id = $1' },
  deleteRejected: { name: 'delete-rejected', text: 'DELETE FROM rejected WHERE id = $1' },
  pruneRejected: {
    name: 'prune-rejected',
    text: `DELETE FROM rejected WHERE time < $1
      OR (time, id) <= (SELECT time, id FROM rejected ORDER BY time DESC, id DESC OFFSET $2 LIMIT 1)
      OR id IN (SELECT id FROM (SELECT id, SUM(size) OVER (ORDER BY time DESC, id DESC) AS total
        FROM rejected) oldest WHERE total > $3)`,
  },
} as const;

export type Statement = { name: string; text: string };
