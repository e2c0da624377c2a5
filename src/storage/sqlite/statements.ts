/** The SQL of the embedded store, prepared once per connection. */
import type Database from 'better-sqlite3';

/** The statements of the connection that reads for the service's thread (store.ts). */
export function readStatements(db: Database.Database) {
  return {
    getSource: db.prepare('SELECT doc FROM sources WHERE id = ?').pluck(),
    listSources: db.prepare('SELECT doc FROM sources ORDER BY id').pluck(),
    getEventRun: db
      .prepare('SELECT r.docs, r.context FROM event_ids i JOIN event_runs r ON r.run = i.run WHERE i.id = ?')
      .raw(),
    ping: db.prepare('SELECT 1').pluck(),
    getEventType: db.prepare('SELECT doc FROM event_types WHERE event_type = ?').pluck(),
    listEventTypes: db.prepare('SELECT doc FROM event_types ORDER BY event_type').pluck(),
    getRejected: db.prepare('SELECT doc FROM rejected WHERE id = ?').pluck(),
    getProfileRule: db.prepare('SELECT doc FROM profile_rules WHERE id = ?').pluck(),
    listProfileRules: db.prepare('SELECT doc FROM profile_rules ORDER BY seq').pluck(),
    listProfileRulesOfType: db
      .prepare('SELECT doc FROM profile_rules WHERE event_type = ? ORDER BY seq')
      .pluck(),
  };
}

/** The statements of the writer thread's connection (writes.ts). */
export function writeStatements(db: Database.Database) {
  return {
    putSource: db.prepare(
      'INSERT INTO sources (id, doc) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc',
    ),
    deleteSource: db.prepare('DELETE FROM sources WHERE id = ?'),
    // No RETURNING here: SQLite gathers returned rows in a temporary b-tree made and dropped per
    // statement, 1-2 µs more per insert than reading the new row id (`seq` is the row id).
    insertSession: db.prepare(
      'INSERT INTO sessions (id, profile_id, version, doc) VALUES (?, ?, 1, ?) ON CONFLICT (id) DO NOTHING',
    ),
    // Answers the session's seq, or nothing when it wrote no row (a conflict). RETURNING costs an
    // update no more than looking the seq up afterwards.
    updateSession: db
      .prepare(
        'UPDATE sessions SET profile_id = ?, doc = ?, version = version + 1 WHERE id = ? AND version = ? RETURNING seq',
      )
      .pluck(),
    getProfile: db.prepare('SELECT doc FROM profiles WHERE id = ?').pluck(),
    profileExists: db.prepare('SELECT 1 FROM profiles WHERE id = ?').pluck(),
    aliasTarget: db.prepare('SELECT profile_id FROM profile_aliases WHERE alias = ?').pluck(),
    // The time of the latest request that did not rewrite the record: `update_time`, or the insert
    // time of the session's newest run when later (migrations.ts); '' when neither is set.
    getSession: db
      .prepare(
        `SELECT doc, version, max(coalesce(update_time, ''),
           coalesce((SELECT max(insert_time) FROM event_runs WHERE session_seq = sessions.seq), ''))
         FROM sessions WHERE id = ?`,
      )
      .raw(),
    // The latest request of a session whose record is not rewritten and that stores no event of it
    // (answers its seq, for its runs).
    touchSession: db
      .prepare(
        "UPDATE sessions SET update_time = max(coalesce(update_time, ''), ?) WHERE id = ? RETURNING seq",
      )
      .pluck(),
    insertProfile: db.prepare('INSERT INTO profiles (id, doc) VALUES (?, ?)'),
    updateProfile: db.prepare('UPDATE profiles SET doc = ? WHERE id = ?'),
    // Held profiles (held-profiles.ts, profile-log.ts): one row per transaction with the changes it
    // held and its time, appended; read when the store opens and after a rolled-back transaction.
    logProfiles: db.prepare('INSERT INTO profile_log (seq, profile_id, doc, at) VALUES (?, ?, ?, ?)'),
    profileLog: db.prepare('SELECT seq, profile_id, doc, at FROM profile_log ORDER BY seq').raw(),
    trimProfileLog: db.prepare('DELETE FROM profile_log WHERE seq < ?'),
    clearProfileLog: db.prepare('DELETE FROM profile_log'),
    sessionSeq: db.prepare('SELECT seq FROM sessions WHERE id = ?').pluck(),
    // OR FAIL (for the run and, overriding theirs, the statements of its triggers): with the default
    // ABORT, SQLite copies every page the statement changes into a statement journal, to undo this
    // one statement alone if it fails. Nothing here needs that: a failure rolls back the whole
    // transaction (see `commit`). Without the copies the write path takes 5-6% less CPU per first
    // visit (36.6 against 38.8 µs, seven alternating runs of 300,000 visits).
    firstFreeRun: db
      .prepare(
        'SELECT max(coalesce((SELECT max(run) FROM event_runs), 0), coalesce((SELECT value FROM run_high), 0)) + 1',
      )
      .pluck(),
    // The run's number comes from the writer (writes.ts: never given twice), not from SQLite, which
    // would give the numbers of deleted newest runs again.
    insertRun: db.prepare(
      'INSERT OR FAIL INTO event_runs (run, insert_time, source_id, session_id, session_seq, profile_id, ids, types, docs, client_ids, oob, context) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    clientIdStored: db
      .prepare('SELECT 1 FROM event_client_ids WHERE client_id = ? AND source_id = ?')
      .pluck(),
    // Of the [client id, source id] pairs of a JSON array, those stored: one look-up per write set.
    storedClientIds: db
      .prepare(
        `SELECT j.value ->> 0, j.value ->> 1 FROM json_each(?) j
           WHERE EXISTS (SELECT 1 FROM event_client_ids c WHERE c.client_id = j.value ->> 0 AND c.source_id = j.value ->> 1)`,
      )
      .raw(),
    eraseSessionEvents: db
      .prepare(
        'DELETE FROM event_runs WHERE session_seq IN (SELECT seq FROM sessions WHERE profile_id = ?) RETURNING json_array_length(ids)',
      )
      .pluck(),
    eraseUnstoredSessionEvents: db
      .prepare(
        `DELETE FROM event_runs WHERE session_seq IS NULL AND session_id IS NOT NULL
           AND session_id IN (SELECT id FROM sessions WHERE profile_id = ?) RETURNING json_array_length(ids)`,
      )
      .pluck(),
    eraseProfileEvents: db
      .prepare('DELETE FROM event_runs WHERE profile_id = ? RETURNING json_array_length(ids)')
      .pluck(),
    eraseSessions: db.prepare('DELETE FROM sessions WHERE profile_id = ?'),
    eraseProfile: db.prepare('DELETE FROM profiles WHERE id = ?'),
    eraseRejected: db.prepare(
      'DELETE FROM rejected WHERE profile_id = @id OR session_id IN (SELECT id FROM sessions WHERE profile_id = @id)',
    ),
    eraseIdentities: db.prepare('DELETE FROM identities WHERE profile_id = ?'),
    eraseAliases: db.prepare('DELETE FROM profile_aliases WHERE profile_id = ?'),
    ruleType: db.prepare('SELECT event_type FROM profile_rules WHERE id = ?').pluck(),
    putProfileRule: db.prepare(
      'INSERT INTO profile_rules (id, event_type, doc) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET event_type = excluded.event_type, doc = excluded.doc',
    ),
    deleteProfileRule: db.prepare('DELETE FROM profile_rules WHERE id = ? RETURNING event_type').pluck(),
    // Identities and merges (profiles.ts).
    identityHolder: db.prepare('SELECT profile_id FROM identities WHERE type = ? AND value = ?').pluck(),
    insertIdentity: db.prepare('INSERT INTO identities (type, value, profile_id) VALUES (?, ?, ?)'),
    deleteIdentity: db.prepare('DELETE FROM identities WHERE type = ? AND value = ?'),
    moveIdentities: db.prepare('UPDATE identities SET profile_id = ? WHERE profile_id = ?'),
    moveAliases: db.prepare('UPDATE profile_aliases SET profile_id = ? WHERE profile_id = ?'),
    insertAlias: db.prepare(
      'INSERT INTO profile_aliases (alias, profile_id) VALUES (?, ?) ON CONFLICT (alias) DO UPDATE SET profile_id = excluded.profile_id',
    ),
    moveSessions: db.prepare(
      `UPDATE sessions SET profile_id = @into, doc = json_set(doc, '$.profile', json_object('id', @into)),
         version = version + 1 WHERE profile_id = @from`,
    ),
    profileRuns: db.prepare('SELECT run, docs FROM event_runs WHERE profile_id = ?').raw(),
    moveRun: db.prepare('UPDATE event_runs SET profile_id = ?, docs = ? WHERE run = ?'),
    moveRejected: db.prepare(
      "UPDATE rejected SET profile_id = @into, doc = json_set(doc, '$.profile_id', @into) WHERE profile_id = @from",
    ),
    putEventType: db.prepare(
      'INSERT INTO event_types (event_type, doc) VALUES (?, ?) ON CONFLICT (event_type) DO UPDATE SET doc = excluded.doc',
    ),
    deleteEventType: db.prepare('DELETE FROM event_types WHERE event_type = ?'),
    putRejected: db.prepare(
      `INSERT INTO rejected (id, time, source_id, session_id, profile_id, event_types, doc, size)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET time = excluded.time, source_id = excluded.source_id,
         session_id = excluded.session_id, profile_id = excluded.profile_id,
         event_types = excluded.event_types, doc = excluded.doc, size = excluded.size`,
    ),
    deleteRejected: db.prepare('DELETE FROM rejected WHERE id = ?'),
    // Retention: the oldest runs inserted before a time, then each deleted by its key (the triggers
    // delete their ids and types).
    oldRuns: db
      .prepare(
        'SELECT run, json_array_length(ids) FROM event_runs WHERE insert_time < ? ORDER BY insert_time LIMIT ?',
      )
      .raw(),
    deleteRun: db.prepare('DELETE FROM event_runs WHERE run = ?'),
    pruneRejectedAge: db.prepare('DELETE FROM rejected WHERE time < ?'),
    pruneRejectedCount: db.prepare(
      'DELETE FROM rejected WHERE id IN (SELECT id FROM rejected ORDER BY time DESC, id DESC LIMIT -1 OFFSET ?)',
    ),
    // The oldest records beyond the newest that fit in the byte budget.
    pruneRejectedBytes: db.prepare(
      `DELETE FROM rejected WHERE id IN (SELECT id FROM
         (SELECT id, SUM(size) OVER (ORDER BY time DESC, id DESC) AS total FROM rejected) WHERE total > ?)`,
    ),
  };
}
