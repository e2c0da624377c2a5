import pg from 'pg';
import { clientConfig, type ConnectionOptions } from './connection.js';
import { translate } from './errors.js';

/**
 * Schema migrations of the PostgreSQL store, applied in order; the table `schema_migrations` records
 * the versions (1-based index in this list) that ran.
 *
 * - Documents have two columns, exactly one of them set: `doc` (`jsonb`) and `raw` (`json`, text kept
 *   verbatim). Documents are written to `raw`, clearing `doc` (rows.ts: EVENT_FIELDS); `doc`
 *   holds those that earlier versions wrote, which kept `raw` only for what jsonb cannot hold
 *   (U+0000, lone surrogates).
 * - The event type record is `json` (text kept as sent): its `json_schema` keys are checked in the
 *   order they were saved, and jsonb would reorder them.
 * - Ids compare byte-wise (`COLLATE "C"`), as in the embedded store, so "newest first, then by id"
 *   is the same order everywhere; times are `timestamptz` (the documents keep the strings as given).
 * Long because every version stays here for ever: a database upgrades through all of them.
 */
export const migrations: string[] = [
  `
  CREATE TABLE sources (
    id text COLLATE "C" PRIMARY KEY,
    doc jsonb,
    raw json,
    CHECK ((doc IS NULL) <> (raw IS NULL))
  );
  CREATE TABLE profiles (
    id text COLLATE "C" PRIMARY KEY,
    doc jsonb,
    raw json,
    CHECK ((doc IS NULL) <> (raw IS NULL))
  );
  CREATE TABLE sessions (
    id text COLLATE "C" PRIMARY KEY,
    profile_id text COLLATE "C",
    version integer NOT NULL,
    doc jsonb,
    raw json,
    CHECK ((doc IS NULL) <> (raw IS NULL))
  );
  CREATE INDEX sessions_profile ON sessions (profile_id);
  CREATE TABLE events (
    id text COLLATE "C" PRIMARY KEY,
    insert_time timestamptz NOT NULL,
    type text COLLATE "C" NOT NULL,
    source_id text COLLATE "C" NOT NULL,
    session_id text COLLATE "C",
    profile_id text COLLATE "C",
    doc jsonb,
    raw json,
    CHECK ((doc IS NULL) <> (raw IS NULL))
  );
  CREATE INDEX events_time ON events (insert_time DESC, id DESC);
  CREATE INDEX events_profile ON events (profile_id, insert_time DESC, id DESC);
  CREATE INDEX events_session ON events (session_id, insert_time DESC, id DESC);
  CREATE INDEX events_type ON events (type, insert_time DESC, id DESC);
  CREATE INDEX events_source ON events (source_id, insert_time DESC, id DESC);
  CREATE TABLE event_types (
    event_type text COLLATE "C" PRIMARY KEY,
    doc json NOT NULL
  );
  CREATE TABLE rejected (
    id text COLLATE "C" PRIMARY KEY,
    time timestamptz NOT NULL,
    source_id text COLLATE "C" NOT NULL,
    event_types text[] NOT NULL,
    doc jsonb,
    raw json,
    CHECK ((doc IS NULL) <> (raw IS NULL))
  );
  CREATE INDEX rejected_time ON rejected (time DESC, id DESC);
  CREATE INDEX rejected_source ON rejected (source_id, time DESC, id DESC);
  CREATE INDEX rejected_event_types ON rejected USING gin (event_types);
  `,
  // The bytes each rejected request takes, for the quarantine's byte budget.
  `
  ALTER TABLE rejected ADD COLUMN size integer NOT NULL DEFAULT 0;
  UPDATE rejected SET size = octet_length(coalesce(doc::text, raw::text));
  `,
  // The time of a session's latest request, when later than its record's `metadata.time.update`: a
  // request that changes nothing else of the session writes this column only (merged into the record
  // when read), not the whole document.
  `
  ALTER TABLE sessions ADD COLUMN update_time timestamptz;
  `,
];

const LOCK_KEY = 'event-collector.schema_migrations';

export interface MigrationState {
  /** Versions applied by this call, in order. */
  applied: number[];
  /** Highest version the database is at now. */
  version: number;
}

async function withClient<T>(options: ConnectionOptions, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client(clientConfig(options));
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await fn(client);
  } catch (error) {
    throw translate(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Applies the migrations the database lacks, in one transaction holding a transaction-level advisory
 * lock (per schema): processes starting together wait for each other and each migration runs once.
 */
export function migrate(options: ConnectionOptions): Promise<MigrationState> {
  return withClient(options, async (client) => {
    await client.query('BEGIN');
    try {
      // Waiting for another process's migrations, or building an index, may take longer than a request.
      await client.query('SET LOCAL statement_timeout = 0');
      await client.query(
        "SELECT pg_advisory_xact_lock(hashtext($1::text || ':' || coalesce(current_schema(), '')))",
        [LOCK_KEY],
      );
      await client.query(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
      );
      const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
      const done = new Set(rows.map((r) => r.version));
      const applied: number[] = [];
      for (let i = 0; i < migrations.length; i++) {
        const version = i + 1;
        if (done.has(version)) continue;
        await client.query(migrations[i]!);
        await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [version]);
        applied.push(version);
      }
      await client.query('COMMIT');
      return { applied, version: Math.max(0, ...done, ...applied) };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  });
}

/** The versions this build knows that the database has not applied yet. */
export function pendingMigrations(options: ConnectionOptions): Promise<number[]> {
  return withClient(options, async (client) => {
    const exists = await client.query("SELECT to_regclass('schema_migrations') IS NOT NULL AS present");
    const done = new Set<number>();
    if (exists.rows[0]?.present) {
      const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
      for (const r of rows) done.add(r.version);
    }
    return migrations.map((_, i) => i + 1).filter((v) => !done.has(v));
  });
}

// Client event ids and event times (docs/api.md#duplicates, #event-time). The unique index on
// (client_id, source_id) decides duplicates inside the committing transaction, across processes
// too; rows without a client id are not in it and cost it nothing. `create_time` is when the event
// happened; `off_band` marks events whose create time lies more than a few minutes from their insert
// time (src/storage/event-band.ts), listed by `events_off_band` for create-time listings. Rows stored
// before keep nulls and false: their events read with create = insert and no client id.
migrations.push(`
  ALTER TABLE events ADD COLUMN client_id text COLLATE "C";
  ALTER TABLE events ADD COLUMN create_time timestamptz;
  ALTER TABLE events ADD COLUMN off_band boolean NOT NULL DEFAULT false;
  CREATE UNIQUE INDEX events_client_id ON events (client_id, source_id) WHERE client_id IS NOT NULL;
  CREATE INDEX events_off_band ON events (insert_time DESC, id DESC) WHERE off_band;
`);

// Destinations (docs/api.md#destinations). Delivery follows events in the order (xid, seq): the
// transaction that stored them (pg_current_xact_id(), the top-level one even inside a savepoint),
// then a sequence. A reader takes only events of transactions older than the oldest one running
// (pg_snapshot_xmin), which have all ended: any event committed later belongs to a transaction
// from that xmin on, so it lies after every cursor (docs/architecture.md#delivery). Rows stored before
// this migration have no xid and are never delivered (no destination existed then).
migrations.push(`
  CREATE SEQUENCE events_seq CACHE 100;
  ALTER TABLE events ADD COLUMN xid xid8, ADD COLUMN seq bigint;
  ALTER TABLE events ALTER COLUMN xid SET DEFAULT pg_current_xact_id(),
    ALTER COLUMN seq SET DEFAULT nextval('events_seq');
  CREATE INDEX events_delivery ON events (xid, seq) WHERE xid IS NOT NULL;
  -- Roles that may insert events (an application role kept apart from the owner) need the sequence.
  DO $grant$
  DECLARE r record;
  BEGIN
    FOR r IN SELECT DISTINCT grantee FROM information_schema.role_table_grants
      WHERE table_schema = current_schema() AND table_name = 'events' AND privilege_type = 'INSERT'
        AND grantee <> current_user
    LOOP
      IF r.grantee = 'PUBLIC' THEN EXECUTE 'GRANT USAGE ON SEQUENCE events_seq TO PUBLIC';
      ELSE EXECUTE format('GRANT USAGE ON SEQUENCE events_seq TO %I', r.grantee);
      END IF;
    END LOOP;
  END $grant$;
  CREATE TABLE destinations (
    id text COLLATE "C" PRIMARY KEY,
    doc text NOT NULL,
    cursor text COLLATE "C" NOT NULL,
    delivered bigint NOT NULL DEFAULT 0,
    failing_since text,
    last_error text,
    batch text,
    lease_owner text,
    lease_until bigint
  );
  CREATE TABLE destination_failed (
    destination_id text COLLATE "C" NOT NULL REFERENCES destinations (id) ON DELETE CASCADE,
    batch_id text COLLATE "C" NOT NULL,
    failed_at text COLLATE "C" NOT NULL,
    doc text NOT NULL,
    PRIMARY KEY (destination_id, batch_id)
  );
  CREATE INDEX destination_failed_time ON destination_failed (destination_id, failed_at DESC, batch_id DESC);
`);

// Profile rules (kept in the order they were first saved: `seq`; `json` keeps their values as
// sent), identities (one profile per type and value: the key that decides merges), aliases of
// merged profiles, and the session and profile of each quarantined request, so that erasing a
// profile erases its refused requests too. A refused request whose raw text holds U+0000 keeps no
// session id: json cannot give such a string back as text.
migrations.push(`
  CREATE TABLE profile_rules (
    seq bigint GENERATED ALWAYS AS IDENTITY,
    id text COLLATE "C" PRIMARY KEY,
    event_type text COLLATE "C" NOT NULL,
    doc json NOT NULL
  );
  CREATE INDEX profile_rules_type ON profile_rules (event_type, seq);
  CREATE TABLE identities (
    type text COLLATE "C" NOT NULL,
    value text COLLATE "C" NOT NULL,
    profile_id text COLLATE "C" NOT NULL,
    PRIMARY KEY (type, value)
  );
  CREATE INDEX identities_profile ON identities (profile_id);
  CREATE TABLE profile_aliases (
    alias text COLLATE "C" PRIMARY KEY,
    profile_id text COLLATE "C" NOT NULL
  );
  CREATE INDEX profile_aliases_profile ON profile_aliases (profile_id);
  ALTER TABLE rejected ADD COLUMN session_id text COLLATE "C", ADD COLUMN profile_id text COLLATE "C";
  UPDATE rejected SET session_id = CASE WHEN doc IS NOT NULL THEN doc->>'session_id'
    WHEN raw::text NOT LIKE '%\\\\u0000%' THEN raw->>'session_id' END;
  CREATE INDEX rejected_session ON rejected (session_id) WHERE session_id IS NOT NULL;
  CREATE INDEX rejected_profile ON rejected (profile_id) WHERE profile_id IS NOT NULL;
`);

// A request's context kept once (docs/api.md#context-storage, src/storage/contexts.ts): a row of
// `event_contexts` (its id is the id of the request's first event; `size` its characters, for the
// byte budget of delivery reads), named by `context_id` on each of the request's events, whose
// documents then hold only the context the event brought itself and are read merged with it. Rows
// stored before, and events of requests whose context is small, keep context_id null: their documents
// hold their whole context. The partial index finds the events of a context, so that deleting events
// deletes the contexts no event names any more; it holds nothing for the others.
migrations.push(`
  CREATE TABLE event_contexts (
    id text COLLATE "C" PRIMARY KEY,
    size integer NOT NULL,
    doc jsonb,
    raw json,
    CHECK ((doc IS NULL) <> (raw IS NULL))
  );
  ALTER TABLE events ADD COLUMN context_id text COLLATE "C";
  CREATE INDEX events_context ON events (context_id) WHERE context_id IS NOT NULL;
  -- Roles that may write events (an application role kept apart from the owner) write contexts too.
  DO $grant$
  DECLARE r record;
  BEGIN
    FOR r IN SELECT DISTINCT grantee, privilege_type FROM information_schema.role_table_grants
      WHERE table_schema = current_schema() AND table_name = 'events'
        AND privilege_type IN ('SELECT', 'INSERT', 'DELETE') AND grantee <> current_user
    LOOP
      IF r.grantee = 'PUBLIC' THEN EXECUTE format('GRANT %s ON event_contexts TO PUBLIC', r.privilege_type);
      ELSE EXECUTE format('GRANT %s ON event_contexts TO %I', r.privilege_type, r.grantee);
      END IF;
    END LOOP;
  END $grant$;
`);

// A session's latest request from its newest event (docs/architecture.md#the-write-path): an event
// whose request counts as its session's activity without rewriting the session (a touch) is marked
// `session_touch`, so that the request writes no session row when it stores an event; the session's
// latest request is the later of `update_time` and the insert time of its newest such event (the
// partial index finds it; other events are not in it). Rows stored before are not marked: their
// requests wrote `update_time`. Deleting events moves the time of the marked ones to `update_time`
// (statements.ts: deletingEvents), so that retention never moves it back.
migrations.push(`
  ALTER TABLE events ADD COLUMN session_touch boolean NOT NULL DEFAULT false;
  CREATE INDEX events_session_touch ON events (session_id, insert_time DESC) WHERE session_touch;
`);
