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
