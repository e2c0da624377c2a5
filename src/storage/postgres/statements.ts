/**
 * The SQL of the PostgreSQL store: static statements, prepared once per connection (by name), and
 * how values and documents cross to and from them.
 */
import { announcing, announcingRows } from './notify.js';

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

/**
 * A json document column (rows.ts: EVENT_FIELDS) with one top-level key set: through jsonb, which
 * changes that key alone, unless the text holds what jsonb cannot (U+0000 or a lone surrogate, as
 * `\u` escapes; a literal backslash before such text counts too), where `fallback` rewrites the
 * text itself.
 */
function moved(column: string, set: string, fallback: string): string {
  return `CASE WHEN ${column} IS NULL THEN NULL
    WHEN ${column}::text ~* '\\\\u(0000|d[89a-f])' THEN (${fallback})::json
    ELSE jsonb_set(${column}::jsonb, ${set})::json END`;
}

export interface DocRow {
  doc: unknown;
  raw: unknown;
}

export function docOf<T>(row: DocRow | undefined): T | null {
  if (!row) return null;
  return (row.doc ?? row.raw) as T;
}

/**
 * Deletes the events matching `where` and the contexts kept once (migrations.ts: event_contexts)
 * that no event left names; answers how many events it deleted as `n`. The statement sees the
 * events as they were before it, hence the events it deletes are excluded by id. The time of the
 * newest deleted event of a session that said when its latest request came (`session_touch`) is
 * kept in the session's `update_time`, locked in id order as /track's touches lock them.
 */
function deletingEvents(where: string): string {
  return `WITH gone AS (DELETE FROM events WHERE ${where} RETURNING id, context_id, session_id, insert_time, session_touch),
    contexts AS (DELETE FROM event_contexts c WHERE c.id IN (SELECT context_id FROM gone)
      AND NOT EXISTS (SELECT FROM events e WHERE e.context_id = c.id AND e.id NOT IN (SELECT id FROM gone))),
    latest AS (SELECT session_id AS id, max(insert_time) AS at FROM gone WHERE session_touch GROUP BY session_id),
    locked AS MATERIALIZED (SELECT id FROM sessions WHERE id IN (SELECT id FROM latest) ORDER BY id FOR UPDATE),
    kept AS (UPDATE sessions s SET update_time = l.at FROM latest l
      WHERE s.id = l.id AND s.id IN (SELECT id FROM locked) AND (s.update_time IS NULL OR s.update_time < l.at))
    SELECT count(*)::integer AS n FROM gone`;
}

/** Static statements, prepared once per connection (by name). */
export const SQL = {
  putSource: {
    name: 'put-source',
    text: announcing(
      'source',
      'INSERT INTO sources (id, raw) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET doc = NULL, raw = excluded.raw',
      'id',
    ),
  },
  getSource: { name: 'get-source', text: 'SELECT doc, raw FROM sources WHERE id = $1' },
  listSources: { name: 'list-sources', text: 'SELECT doc, raw FROM sources ORDER BY id' },
  deleteSource: {
    name: 'delete-source',
    text: announcing('source', 'DELETE FROM sources WHERE id = $1', 'id'),
  },
  // Sessions and profiles are read many at once (read-batch.ts).
  // The latest request: `update_time` or the newest event marked session_touch (migrations.ts).
  getSessions: {
    name: 'get-sessions',
    text: `SELECT s.id, s.doc, s.raw, s.version, greatest(s.update_time,
        (SELECT max(e.insert_time) FROM events e WHERE e.session_id = s.id AND e.session_touch)) AS update_time
      FROM sessions s WHERE s.id = ANY($1::text[])`,
  },
  // The sessions a batch uses without rewriting them, locked in id order (as profiles are, so that
  // batches of several processes cannot deadlock on them: a row is updated only once `locked` holds
  // it), then given the time of their latest request.
  touchSessions: {
    name: 'touch-sessions',
    text: `WITH locked AS MATERIALIZED (SELECT id FROM sessions WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE)
      UPDATE sessions s SET update_time = t.at FROM unnest($1::text[], $2::timestamptz[]) AS t(id, at)
      WHERE s.id = t.id AND s.id IN (SELECT id FROM locked) AND (s.update_time IS NULL OR s.update_time < t.at)`,
  },
  // A merged profile's id is an alias: it answers the survivor.
  getProfiles: {
    name: 'get-profiles',
    text: `SELECT id AS key, false AS alias, doc, raw FROM profiles WHERE id = ANY($1::text[])
      UNION ALL SELECT a.alias, true, p.doc, p.raw FROM profile_aliases a JOIN profiles p ON p.id = a.profile_id
        WHERE a.alias = ANY($1::text[])`,
  },
  findByIdentity: {
    name: 'find-by-identity',
    text: 'SELECT p.doc, p.raw FROM identities i JOIN profiles p ON p.id = i.profile_id WHERE i.type = $1 AND i.value = $2',
  },
  // Visits and rule changes do not change the key: NO KEY UPDATE lets the requests that only
  // require a profile to exist (FOR KEY SHARE) go on. Merges delete a profile: FOR UPDATE.
  lockProfiles: {
    name: 'lock-profiles',
    text: 'SELECT id, doc, raw FROM profiles WHERE id = ANY($1::text[]) ORDER BY id FOR NO KEY UPDATE',
  },
  lockProfilesForMerge: {
    name: 'lock-profiles-for-merge',
    text: 'SELECT id, doc, raw FROM profiles WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE',
  },
  lockProfile: { name: 'lock-profile', text: 'SELECT id, doc, raw FROM profiles WHERE id = $1 FOR UPDATE' },
  aliasTarget: { name: 'alias-target', text: 'SELECT profile_id FROM profile_aliases WHERE alias = $1' },
  identityHolders: {
    name: 'identity-holders',
    text: 'SELECT DISTINCT profile_id FROM identities i JOIN unnest($1::text[], $2::text[]) k (type, value) USING (type, value)',
  },
  identityHolder: {
    name: 'identity-holder',
    text: 'SELECT profile_id FROM identities WHERE type = $1 AND value = $2',
  },
  insertIdentity: {
    name: 'insert-identity',
    text: 'INSERT INTO identities (type, value, profile_id) VALUES ($1, $2, $3) ON CONFLICT (type, value) DO NOTHING',
  },
  deleteIdentity: { name: 'delete-identity', text: 'DELETE FROM identities WHERE type = $1 AND value = $2' },
  updateProfile: {
    name: 'update-profile',
    text: 'UPDATE profiles SET doc = NULL, raw = $2::json WHERE id = $1',
  },
  // Everything of profile $2 becomes $1's, and $2 an alias of $1: one statement, one round trip.
  // $3 and $4 are `"profile":{"id":…}` of each, to rewrite the json documents jsonb cannot hold.
  mergeProfile: {
    name: 'merge-profile',
    text: `WITH sessions_moved AS (UPDATE sessions SET profile_id = $1,
        doc = CASE WHEN doc IS NULL THEN NULL ELSE jsonb_set(doc, '{profile}', jsonb_build_object('id', $1::text)) END,
        raw = ${moved('raw', "'{profile}', jsonb_build_object('id', $1::text)", 'replace(raw::text, $4, $3)')},
        version = version + 1 WHERE profile_id = $2),
      events_moved AS (UPDATE events SET profile_id = $1,
        doc = CASE WHEN doc IS NULL THEN NULL ELSE jsonb_set(doc, '{profile}', jsonb_build_object('id', $1::text)) END,
        raw = ${moved('raw', "'{profile}', jsonb_build_object('id', $1::text)", 'replace(raw::text, $4, $3)')}
        WHERE profile_id = $2),
      identities_moved AS (UPDATE identities SET profile_id = $1 WHERE profile_id = $2),
      aliases_moved AS (UPDATE profile_aliases SET profile_id = $1 WHERE profile_id = $2),
      alias AS (INSERT INTO profile_aliases (alias, profile_id) VALUES ($2, $1)
        ON CONFLICT (alias) DO UPDATE SET profile_id = excluded.profile_id),
      rejected_moved AS (UPDATE rejected SET profile_id = $1,
        doc = CASE WHEN doc IS NULL THEN NULL ELSE jsonb_set(doc, '{profile_id}', to_jsonb($1::text)) END,
        raw = ${moved(
          'raw',
          "'{profile_id}', to_jsonb($1::text)",
          `replace(raw::text, '"profile_id":' || to_json($2::text)::text, '"profile_id":' || to_json($1::text)::text)`,
        )}
        WHERE profile_id = $2),
      merged AS (DELETE FROM profiles WHERE id = $2)
      SELECT 1`,
  },
  // An event, and the context kept once it names (as `context`, jsonb, or `context_raw`), if any.
  getEvent: {
    name: 'get-event',
    text: `SELECT e.doc, e.raw, c.doc AS context, c.raw AS context_raw FROM events e
      LEFT JOIN event_contexts c ON c.id = e.context_id WHERE e.id = $1`,
  },
  // These three answer the events deleted as `n` (deletingEvents).
  eraseSessionEvents: {
    name: 'erase-session-events',
    text: deletingEvents('session_id IN (SELECT id FROM sessions WHERE profile_id = $1)'),
  },
  eraseProfileEvents: { name: 'erase-profile-events', text: deletingEvents('profile_id = $1') },
  eraseSessions: { name: 'erase-sessions', text: 'DELETE FROM sessions WHERE profile_id = $1' },
  eraseProfile: { name: 'erase-profile', text: 'DELETE FROM profiles WHERE id = $1' },
  eraseRejected: {
    name: 'erase-rejected',
    text: 'DELETE FROM rejected WHERE profile_id = $1 OR session_id IN (SELECT id FROM sessions WHERE profile_id = $1)',
  },
  eraseIdentities: { name: 'erase-identities', text: 'DELETE FROM identities WHERE profile_id = $1' },
  eraseAliases: { name: 'erase-aliases', text: 'DELETE FROM profile_aliases WHERE profile_id = $1' },
  putProfileRule: {
    name: 'put-profile-rule',
    text: `WITH old AS (SELECT event_type FROM profile_rules WHERE id = $1),
      saved AS (INSERT INTO profile_rules (id, event_type, doc) VALUES ($1, $2, $3)
        ON CONFLICT (id) DO UPDATE SET event_type = excluded.event_type, doc = excluded.doc RETURNING event_type),
      types AS (SELECT event_type AS id FROM old UNION SELECT event_type FROM saved)
      ${announcingRows('profile_rule', 'types', '(SELECT event_type FROM old) AS previous, ')}`,
  },
  getProfileRule: { name: 'get-profile-rule', text: 'SELECT doc FROM profile_rules WHERE id = $1' },
  listProfileRules: { name: 'list-profile-rules', text: 'SELECT doc FROM profile_rules ORDER BY seq' },
  listProfileRulesOfType: {
    name: 'list-profile-rules-of-type',
    text: 'SELECT doc FROM profile_rules WHERE event_type = $1 ORDER BY seq',
  },
  deleteProfileRule: {
    name: 'delete-profile-rule',
    text: `WITH changed AS (DELETE FROM profile_rules WHERE id = $1 RETURNING event_type AS id)
      ${announcingRows('profile_rule', 'changed', 'id AS event_type, ')}`,
  },
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
    text: `INSERT INTO rejected (id, time, source_id, session_id, profile_id, event_types, raw, size)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
      ON CONFLICT (id) DO UPDATE SET time = excluded.time, source_id = excluded.source_id,
        session_id = excluded.session_id, profile_id = excluded.profile_id,
        event_types = excluded.event_types, doc = NULL, raw = excluded.raw, size = excluded.size`,
  },
  // Retention: the oldest events, skipping rows another process is deleting at the same moment.
  deleteEventsBefore: {
    name: 'delete-events-before',
    text: deletingEvents(
      'id IN (SELECT id FROM events WHERE insert_time < $1 ORDER BY insert_time LIMIT $2 FOR UPDATE SKIP LOCKED)',
    ),
  },
  getRejected: { name: 'get-rejected', text: 'SELECT doc, raw FROM rejected WHERE id = $1' },
  updateRejected: {
    name: 'update-rejected',
    text: 'UPDATE rejected SET doc = NULL, raw = $2, size = $3 WHERE id = $1',
  },
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
