/**
 * Schema migrations of the embedded store, applied in order at open. `PRAGMA user_version` records
 * how many have run. Documents are JSON text; the columns beside them exist for lookups and ordering.
 */
export const migrations: string[] = [
  `
  CREATE TABLE sources (id TEXT PRIMARY KEY, doc TEXT NOT NULL);
  CREATE TABLE profiles (id TEXT PRIMARY KEY, doc TEXT NOT NULL);
  CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    profile_id TEXT,
    version INTEGER NOT NULL,
    doc TEXT NOT NULL
  );
  CREATE INDEX sessions_profile ON sessions (profile_id);
  CREATE TABLE events (
    id TEXT PRIMARY KEY,
    insert_time TEXT NOT NULL,
    type TEXT NOT NULL,
    source_id TEXT NOT NULL,
    session_id TEXT,
    profile_id TEXT,
    doc TEXT NOT NULL
  );
  CREATE INDEX events_time ON events (insert_time, id);
  CREATE INDEX events_profile ON events (profile_id, insert_time, id);
  CREATE INDEX events_session ON events (session_id, insert_time, id);
  CREATE INDEX events_type ON events (type, insert_time, id);
  CREATE INDEX events_source ON events (source_id, insert_time, id);
  `,
];

migrations.push(`
  CREATE TABLE event_types (event_type TEXT PRIMARY KEY, doc TEXT NOT NULL);
  CREATE TABLE rejected (
    id TEXT PRIMARY KEY,
    time TEXT NOT NULL,
    source_id TEXT NOT NULL,
    event_types TEXT NOT NULL,
    doc TEXT NOT NULL
  );
  CREATE INDEX rejected_time ON rejected (time, id);
  CREATE INDEX rejected_source ON rejected (source_id, time, id);
`);

// Events are stored in runs: the consecutive events of one write set that share their insert time,
// source, session and profile make one row, so that a request's events cost one row and one entry
// per index instead of one per event. `event_ids` finds the run of an event; `event_run_types` the
// runs holding an event type. Triggers keep both in step with the runs.
// A run names its session by the session's `seq` (new sessions get ever larger ones), so that the
// runs of new and recent sessions are added at the end of the session index rather than all over
// it as random session ids would be; runs of a session that is not stored keep only its id.
migrations.push(`
  CREATE TABLE sessions_seq (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    profile_id TEXT,
    version INTEGER NOT NULL,
    doc TEXT NOT NULL
  );
  INSERT INTO sessions_seq (seq, id, profile_id, version, doc)
    SELECT rowid, id, profile_id, version, doc FROM sessions ORDER BY rowid;
  DROP TABLE sessions;
  ALTER TABLE sessions_seq RENAME TO sessions;
  CREATE INDEX sessions_profile ON sessions (profile_id);

  CREATE TABLE event_runs (
    run INTEGER PRIMARY KEY,
    insert_time TEXT NOT NULL,
    source_id TEXT NOT NULL,
    session_id TEXT,
    session_seq INTEGER,
    profile_id TEXT,
    ids TEXT NOT NULL,
    types TEXT NOT NULL,
    docs TEXT NOT NULL
  );
  CREATE INDEX event_runs_time ON event_runs (insert_time);
  CREATE INDEX event_runs_profile ON event_runs (profile_id, insert_time);
  CREATE INDEX event_runs_session ON event_runs (session_seq, insert_time) WHERE session_seq IS NOT NULL;
  CREATE INDEX event_runs_unstored_session ON event_runs (session_id, insert_time)
    WHERE session_seq IS NULL AND session_id IS NOT NULL;
  CREATE INDEX event_runs_source ON event_runs (source_id, insert_time);
  CREATE TABLE event_ids (id TEXT PRIMARY KEY, run INTEGER NOT NULL) WITHOUT ROWID;
  CREATE TABLE event_run_types (
    type TEXT NOT NULL,
    insert_time TEXT NOT NULL,
    run INTEGER NOT NULL,
    PRIMARY KEY (type, insert_time, run)
  ) WITHOUT ROWID;
  CREATE TRIGGER event_runs_added AFTER INSERT ON event_runs BEGIN
    INSERT INTO event_ids (id, run) SELECT value, new.run FROM json_each(new.ids);
    INSERT INTO event_run_types (type, insert_time, run)
      SELECT value, new.insert_time, new.run FROM json_each(new.types);
  END;
  CREATE TRIGGER event_runs_removed AFTER DELETE ON event_runs BEGIN
    DELETE FROM event_ids WHERE id IN (SELECT value FROM json_each(old.ids));
    DELETE FROM event_run_types
      WHERE type IN (SELECT value FROM json_each(old.types)) AND insert_time = old.insert_time AND run = old.run;
  END;
  INSERT INTO event_runs (insert_time, source_id, session_id, session_seq, profile_id, ids, types, docs)
    SELECT e.insert_time, e.source_id, e.session_id, s.seq, e.profile_id, json_array(e.id), json_array(e.type),
      '[' || e.doc || ']'
    FROM events e LEFT JOIN sessions s ON s.id = e.session_id ORDER BY e.insert_time, e.id;
  DROP TABLE events;
`);

// The bytes each rejected request takes, for the quarantine's byte budget.
migrations.push(`
  ALTER TABLE rejected ADD COLUMN size INTEGER NOT NULL DEFAULT 0;
  UPDATE rejected SET size = length(CAST(doc AS BLOB));
`);

// The time of a session's latest request, when later than its record's `metadata.time.update`: a
// request that changes nothing else of the session writes this column only (merged into the record
// when read), not the whole document.
migrations.push(`
  ALTER TABLE sessions ADD COLUMN update_time TEXT;
`);

// Client event ids and event times (docs/api.md#duplicates, #event-time). `client_ids` holds the
// client ids of a run's events (null when none has one); `event_client_ids` keys them by client id
// and source, one row each, so that a duplicate is found with one look-up per write set; triggers
// keep it in step with the runs, so erasing an event frees its client id. `oob` marks the runs
// holding an event whose create time lies more than a few minutes from its insert time (see
// src/storage/event-band.ts); `event_runs_oob` lists them for create-time listings. Runs stored
// before have neither: their events read with create = insert and no client id (documents.ts).
migrations.push(`
  ALTER TABLE event_runs ADD COLUMN client_ids TEXT;
  ALTER TABLE event_runs ADD COLUMN oob INTEGER NOT NULL DEFAULT 0;
  CREATE INDEX event_runs_oob ON event_runs (insert_time) WHERE oob = 1;
  CREATE TABLE event_client_ids (
    client_id TEXT NOT NULL,
    source_id TEXT NOT NULL,
    run INTEGER NOT NULL,
    PRIMARY KEY (client_id, source_id)
  ) WITHOUT ROWID;
  CREATE TRIGGER event_runs_client_ids_added AFTER INSERT ON event_runs WHEN new.client_ids IS NOT NULL BEGIN
    INSERT INTO event_client_ids (client_id, source_id, run)
      SELECT value, new.source_id, new.run FROM json_each(new.client_ids);
  END;
  CREATE TRIGGER event_runs_client_ids_removed AFTER DELETE ON event_runs WHEN old.client_ids IS NOT NULL BEGIN
    DELETE FROM event_client_ids
      WHERE client_id IN (SELECT value FROM json_each(old.client_ids)) AND source_id = old.source_id;
  END;
`);

// Destinations (docs/api.md#destinations). A destination's delivery state is its row: the cursor
// (the first position not delivered: a run and the index of an event in it), the batch in flight
// (JSON) and the lease of the process delivering. Runs are numbered by the writer in commit order
// and never reuse a number (writes.ts), so every run committed after a cursor lies after it:
// `run_high` keeps the highest run deleted while it was the newest, which SQLite would otherwise
// give again (deleting old runs, as retention does, costs the trigger one lookup).
migrations.push(`
  CREATE TABLE run_high (id INTEGER PRIMARY KEY CHECK (id = 1), value INTEGER NOT NULL);
  INSERT INTO run_high (id, value) VALUES (1, 0);
  CREATE TRIGGER event_runs_high AFTER DELETE ON event_runs
    WHEN old.run > coalesce((SELECT max(run) FROM event_runs), 0)
      AND old.run > (SELECT value FROM run_high WHERE id = 1) BEGIN
    UPDATE run_high SET value = old.run WHERE id = 1;
  END;
  CREATE TABLE destinations (
    id TEXT PRIMARY KEY,
    doc TEXT NOT NULL,
    cursor TEXT NOT NULL,
    delivered INTEGER NOT NULL DEFAULT 0,
    failing_since TEXT,
    last_error TEXT,
    batch TEXT,
    lease_owner TEXT,
    lease_until INTEGER
  );
  CREATE TABLE destination_failed (
    destination_id TEXT NOT NULL,
    batch_id TEXT NOT NULL,
    failed_at TEXT NOT NULL,
    doc TEXT NOT NULL,
    PRIMARY KEY (destination_id, batch_id)
  ) WITHOUT ROWID;
  CREATE INDEX destination_failed_time ON destination_failed (destination_id, failed_at, batch_id);
`);

// Profile rules (kept in the order they were first saved: `seq`), identities (one profile per
// type and value: the key that decides merges), aliases of merged profiles, and the session and
// profile of each quarantined request, so that erasing a profile erases its refused requests too.
migrations.push(`
  CREATE TABLE profile_rules (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    event_type TEXT NOT NULL,
    doc TEXT NOT NULL
  );
  CREATE INDEX profile_rules_type ON profile_rules (event_type, seq);
  CREATE TABLE identities (
    type TEXT NOT NULL,
    value TEXT NOT NULL,
    profile_id TEXT NOT NULL,
    PRIMARY KEY (type, value)
  ) WITHOUT ROWID;
  CREATE INDEX identities_profile ON identities (profile_id);
  CREATE TABLE profile_aliases (alias TEXT PRIMARY KEY, profile_id TEXT NOT NULL) WITHOUT ROWID;
  CREATE INDEX profile_aliases_profile ON profile_aliases (profile_id);
  ALTER TABLE rejected ADD COLUMN session_id TEXT;
  ALTER TABLE rejected ADD COLUMN profile_id TEXT;
  UPDATE rejected SET session_id = json_extract(doc, '$.session_id');
  CREATE INDEX rejected_session ON rejected (session_id) WHERE session_id IS NOT NULL;
  CREATE INDEX rejected_profile ON rejected (profile_id) WHERE profile_id IS NOT NULL;
`);

// A request's context kept once on its run (docs/api.md#context-storage, src/storage/contexts.ts):
// when set, each record of `docs` holds only the context its event brought itself, and is read
// merged with this one. Runs stored before, and runs whose context is small, keep it null: their
// records hold their whole context.
migrations.push(`
  ALTER TABLE event_runs ADD COLUMN context TEXT;
`);

// The time of a session's latest request is also the insert time of its newest run that names the
// session by seq (statements.ts: getSession), so that a request storing events for a session it
// does not rewrite writes no session row at all (writes.ts). Runs of requests that do not count as
// activity (saveSession: false) name the session by id only from now on. Deleting a run (retention)
// keeps its time in `update_time`, so the session's latest request never moves back.
migrations.push(`
  CREATE TRIGGER event_runs_session_latest AFTER DELETE ON event_runs WHEN old.session_seq IS NOT NULL BEGIN
    UPDATE sessions SET update_time = old.insert_time
      WHERE seq = old.session_seq AND coalesce(update_time, '') < old.insert_time;
  END;
`);

// Held profiles (held-profiles.ts, docs/architecture.md#held-profiles): the documents of profile
// changes whose row in \`profiles\` is not rewritten yet, in commit order; the store writes them to
// their rows when it opens, so a crash loses none.
migrations.push(`
  CREATE TABLE profile_log (seq INTEGER PRIMARY KEY, profile_id TEXT NOT NULL, doc TEXT NOT NULL);
`);

// Held profiles: when each change was committed (milliseconds), so that holds read again from the
// log after a rolled-back transaction keep their times.
migrations.push(`
  ALTER TABLE profile_log ADD COLUMN at INTEGER NOT NULL DEFAULT 0;
`);
