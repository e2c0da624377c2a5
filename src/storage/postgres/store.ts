import type pg from 'pg';
import type {
  CommitResult,
  EventRecord,
  EventSource,
  EventTypeRecord,
  ProfileRecord,
  RejectedRecord,
  StoredSession,
  WriteSet,
} from '../../model/records.js';
import { GroupCommitter, type ItemOutcome } from '../group-commit.js';
import { ConfigError } from '../../config.js';
import type {
  ErasedCounts,
  EventFilter,
  EventPosition,
  RejectedFilter,
  Store,
  StoreChange,
} from '../store.js';
import { StoreUnavailableError } from '../store.js';
import { migrate, pendingMigrations } from './migrations.js';
import { announcing, ChangeFeed } from './notify.js';
import {
  createPool,
  inTransaction,
  isConnectionLost,
  isRetryable,
  isUnavailable,
  translate,
  type ConnectionOptions,
} from './pool.js';
import { documentColumns as columns, planWriteSet, type WritePlan } from './write-set.js';

export interface PostgresOptions {
  /** `postgres://…` connection string. */
  url: string;
  /** Most write sets waiting for a commit; past it `commit` rejects with WriteQueueFullError. */
  writeQueueLimit: number;
  /** Most connections of this process (default 10). */
  poolSize?: number;
  /** `open()` applies missing migrations (default). When false it only checks that none is missing. */
  migrateOnStart?: boolean;
  /**
   * LISTEN for the changes other processes make to event sources and event types (default true),
   * for `watchChanges`. Changes made through this store are announced either way.
   */
  listen?: boolean;
  /** Longest wait for a connection, in ms (default 5000). */
  connectTimeoutMs?: number;
  /** Longest run of one statement, in ms (default 15000). */
  statementTimeoutMs?: number;
}

/** Longest a health check waits for the database. */
const PING_TIMEOUT_MS = 2000;
/** Attempts of a write set that lost a deadlock or serialization race before its error is reported. */
const RETRIES = 3;

/**
 * PostgreSQL text cannot hold U+0000. In ids and other key values (never in documents, where JSON
 * escapes it) it stands as U+FFFD, the same way on writes and lookups, so such a value is stored and
 * found instead of failing the request.
 */
function storable(value: unknown): unknown {
  if (typeof value === 'string') return value.includes('\0') ? value.replaceAll('\0', '\uFFFD') : value;
  if (Array.isArray(value)) return value.map(storable);
  return value;
}

/** The driver error behind a StoreUnavailableError. */
function causeOf(error: unknown): unknown {
  return error instanceof StoreUnavailableError ? error.cause : error;
}

interface DocRow {
  doc: unknown;
  raw: unknown;
}

function docOf<T>(row: DocRow | undefined): T | null {
  if (!row) return null;
  return (row.doc ?? row.raw) as T;
}

const FILTER_COLUMNS: [keyof EventFilter, string][] = [
  ['profileId', 'profile_id'],
  ['sessionId', 'session_id'],
  ['type', 'type'],
  ['sourceId', 'source_id'],
];

/** Static statements, prepared once per connection (by name). */
const SQL = {
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
  getSession: { name: 'get-session', text: 'SELECT doc, raw, version FROM sessions WHERE id = $1' },
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
    text: 'INSERT INTO rejected (id, time, source_id, event_types, doc, raw) VALUES ($1, $2, $3, $4, $5, $6)',
  },
  getRejected: { name: 'get-rejected', text: 'SELECT doc, raw FROM rejected WHERE id = $1' },
  deleteRejected: { name: 'delete-rejected', text: 'DELETE FROM rejected WHERE id = $1' },
  pruneRejected: {
    name: 'prune-rejected',
    text: `DELETE FROM rejected WHERE time < $1
      OR (time, id) <= (SELECT time, id FROM rejected ORDER BY time DESC, id DESC OFFSET $2 LIMIT 1)`,
  },
} as const;

type Statement = { name: string; text: string };

/**
 * The shared store: PostgreSQL through a connection pool. Writes go through group commit (one
 * transaction per batch, a savepoint per write set); several collector processes may share the
 * database: sessions are inserted if absent or updated at an expected version, and profile visits
 * are applied on the row locked with SELECT … FOR UPDATE. Changes of event sources and event types
 * are announced to the other processes with NOTIFY (see notify.ts and `watchChanges`).
 */
export class PostgresStore implements Store {
  private pool: pg.Pool | null = null;
  private readonly committer: GroupCommitter<WriteSet, CommitResult>;
  private readonly connection: ConnectionOptions;
  private readonly changes: ChangeFeed;

  constructor(private readonly options: PostgresOptions) {
    this.connection = {
      url: options.url,
      connectTimeoutMs: options.connectTimeoutMs ?? 5000,
      statementTimeoutMs: options.statementTimeoutMs ?? 15_000,
    };
    this.committer = new GroupCommitter((items) => this.writeBatch(items), options.writeQueueLimit);
    this.changes = new ChangeFeed(this.connection);
  }

  async open(): Promise<void> {
    if (this.pool) return;
    if (this.options.migrateOnStart ?? true) {
      await migrate(this.connection);
    } else {
      const pending = await pendingMigrations(this.connection);
      if (pending.length > 0) {
        throw new ConfigError(
          `the database lacks migrations ${pending.join(', ')} and TRACK_PG_MIGRATE=no: run \`npm run migrate\` with this DATABASE_URL first`,
        );
      }
    }
    this.pool = createPool({ ...this.connection, max: this.options.poolSize ?? 10 });
  }

  async close(): Promise<void> {
    const pool = this.pool;
    if (!pool) return;
    await this.changes.stop();
    await this.committer.drain();
    this.pool = null;
    await pool.end();
  }

  /**
   * Changes of event sources and event types made by any process on this database (this one
   * included), from a LISTEN connection of their own; nothing when `listen` is false. After each
   * (re)connection the listener gets `id: null` for both kinds: changes may have been missed.
   */
  watchChanges(listener: (change: StoreChange) => void): () => void {
    if (this.options.listen === false) return () => undefined;
    return this.changes.subscribe(listener);
  }

  /** True while the LISTEN connection of `watchChanges` is established. */
  get listening(): boolean {
    return this.changes.listening;
  }

  private get db(): pg.Pool {
    if (!this.pool) throw new StoreUnavailableError('the store is not open');
    return this.pool;
  }

  /** One statement on any connection of the pool; driver errors become StoreUnavailableError. */
  private async query<R extends pg.QueryResultRow>(
    statement: Statement | string,
    values: unknown[] = [],
  ): Promise<pg.QueryResult<R>> {
    try {
      const config = typeof statement === 'string' ? { text: statement } : statement;
      return await this.db.query<R>({ ...config, values: values.map(storable) });
    } catch (error) {
      throw translate(error);
    }
  }

  private async transaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    try {
      return await inTransaction(this.db, fn);
    } catch (error) {
      throw translate(error);
    }
  }

  async ping(): Promise<boolean> {
    const pool = this.pool;
    if (!pool) return false;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS);
    });
    const answer = pool.query('SELECT 1').then(
      () => true,
      () => false,
    );
    try {
      return await Promise.race([answer, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  commit(writeSet: WriteSet): Promise<CommitResult> {
    return this.committer.submit(writeSet);
  }

  get queueDepth(): number {
    return this.committer.depth;
  }

  // ---- group commit ----

  /**
   * Writes a batch in one transaction, each write set in its own savepoint, so that a conflict or an
   * error undoes that write set alone. The profiles the batch visits are locked first, in id order,
   * so that batches of several processes cannot deadlock on them. A write set that loses a deadlock
   * or serialization race on something else is retried alone after the batch; when the batch
   * transaction itself fails for a reason other than an unreachable database, every write set is
   * retried alone so that one bad write set cannot fail the others.
   */
  private async writeBatch(items: WriteSet[]): Promise<ItemOutcome<CommitResult>[]> {
    let outcomes: (ItemOutcome<CommitResult> | undefined)[];
    try {
      outcomes = (await this.batchTransaction(items)).map((o) =>
        o.ok || !isRetryable(o.error) ? o : undefined,
      );
    } catch (error) {
      if (isUnavailable(error) && !isRetryable(causeOf(error))) throw error;
      outcomes = items.map(() => undefined);
    }
    for (let i = 0; i < items.length; i++) outcomes[i] ??= await this.writeAlone(items[i]!);
    return outcomes.map((o) => (o!.ok ? o! : { ok: false, error: translate(o!.error) }));
  }

  /** One write set in a transaction of its own, tried again after a deadlock or serialization failure. */
  private async writeAlone(ws: WriteSet): Promise<ItemOutcome<CommitResult>> {
    for (let attempt = 1; ; attempt++) {
      let outcome: ItemOutcome<CommitResult>;
      try {
        outcome = (await this.batchTransaction([ws]))[0]!;
      } catch (error) {
        outcome = { ok: false, error };
      }
      if (outcome.ok || attempt >= RETRIES || !isRetryable(causeOf(outcome.error))) return outcome;
    }
  }

  private batchTransaction(items: WriteSet[]): Promise<ItemOutcome<CommitResult>[]> {
    return this.transaction(async (client) => {
      const profiles = await this.lockVisitedProfiles(client, items);
      const outcomes: ItemOutcome<CommitResult>[] = new Array(items.length);
      let next = 0;
      while (next < items.length) next = await this.writeChunk(client, items, next, profiles, outcomes);
      return outcomes;
    });
  }

  /** Locks the stored profiles that the batch visits (in id order) and returns their documents. */
  private async lockVisitedProfiles(
    client: pg.PoolClient,
    items: WriteSet[],
  ): Promise<Map<string, ProfileRecord>> {
    const ids = new Set<string>();
    for (const ws of items) if (ws.profile?.op === 'visit') ids.add(ws.profile.id);
    const profiles = new Map<string, ProfileRecord>();
    if (ids.size === 0) return profiles;
    const { rows } = await client.query<DocRow & { id: string }>({
      ...SQL.lockProfiles,
      values: [[...ids].map(storable)],
    });
    for (const row of rows) profiles.set(row.id, docOf<ProfileRecord>(row)!);
    return profiles;
  }

  /**
   * Writes the write sets from `start` on, each between SAVEPOINT and RELEASE, sending them all at
   * once (the connection pipelines them: one round trip for the lot). The chunk stops before a write
   * set whose profile an earlier one of the chunk creates or visits, since its visit must see that
   * write set's outcome. When a statement fails, the server ignores what follows until ROLLBACK TO
   * SAVEPOINT: that write set gets the error and the ones after it are sent again. `profiles` holds
   * the current documents of the locked profiles and takes the changes of each write set kept.
   * Returns the index of the first write set not done.
   */
  private async writeChunk(
    client: pg.PoolClient,
    items: WriteSet[],
    start: number,
    profiles: Map<string, ProfileRecord>,
    outcomes: ItemOutcome<CommitResult>[],
  ): Promise<number> {
    const touched = new Set<string>();
    const planned: { index: number; plan: Extract<WritePlan, { statement: unknown }> }[] = [];
    let end = start;
    for (; end < items.length; end++) {
      const ws = items[end]!;
      const profileId = ws.profile?.op === 'create' ? ws.profile.record.id : ws.profile?.id;
      if (profileId !== undefined) {
        if (touched.has(profileId)) break;
        touched.add(profileId);
      }
      const plan = planWriteSet(ws, (id) => profiles.get(id) ?? null);
      if ('conflict' in plan) outcomes[end] = { ok: true, value: { ok: false, conflict: plan.conflict } };
      else planned.push({ index: end, plan });
    }
    const sent = planned.map(({ plan: { statement } }) =>
      Promise.allSettled([
        client.query('SAVEPOINT write_set'),
        client.query<{ written: boolean }>({ ...statement, values: statement.values.map(storable) }),
        client.query('RELEASE SAVEPOINT write_set'),
      ]),
    );
    const results = await Promise.all(sent);
    for (let k = 0; k < planned.length; k++) {
      const { index, plan } = planned[k]!;
      const [savepoint, write, release] = results[k]!;
      const failed = [savepoint, write, release].find((step) => step.status === 'rejected');
      if (failed) {
        const error: unknown = failed.reason;
        // Without the savepoint or the connection, the transaction cannot go on: the batch fails.
        if (savepoint.status === 'rejected' || isConnectionLost(error)) throw error;
        await client.query('ROLLBACK TO SAVEPOINT write_set');
        outcomes[index] = { ok: false, error };
        return index + 1;
      }
      if (write.status === 'fulfilled' && write.value.rows[0]?.written === true) {
        if (plan.profile) profiles.set(plan.profile.id, plan.profile);
        outcomes[index] = { ok: true, value: { ok: true, profile: plan.profile } };
      } else {
        outcomes[index] = { ok: true, value: { ok: false, conflict: 'session' } };
      }
    }
    return end;
  }

  // ---- records ----

  async putSource(source: EventSource): Promise<void> {
    await this.query(SQL.putSource, [source.id, ...columns(source)]);
  }

  async getSource(id: string): Promise<EventSource | null> {
    return docOf<EventSource>((await this.query<DocRow>(SQL.getSource, [id])).rows[0]);
  }

  async listSources(): Promise<EventSource[]> {
    return (await this.query<DocRow>(SQL.listSources)).rows.map((row) => docOf<EventSource>(row)!);
  }

  async deleteSource(id: string): Promise<boolean> {
    return ((await this.query(SQL.deleteSource, [id])).rowCount ?? 0) > 0;
  }

  async getSession(id: string): Promise<StoredSession | null> {
    const row = (await this.query<DocRow & { version: number }>(SQL.getSession, [id])).rows[0];
    return row ? { record: docOf(row)!, version: row.version } : null;
  }

  async getProfile(id: string): Promise<ProfileRecord | null> {
    return docOf<ProfileRecord>((await this.query<DocRow>(SQL.getProfile, [id])).rows[0]);
  }

  async getEvent(id: string): Promise<EventRecord | null> {
    return docOf<EventRecord>((await this.query<DocRow>(SQL.getEvent, [id])).rows[0]);
  }

  /** One page, newest first by (time column, id), of the documents matching `conditions`. */
  private async page<T>(
    table: string,
    timeColumn: string,
    conditions: [string, unknown][],
    limit: number,
    after: EventPosition | null,
  ): Promise<T[]> {
    const where: string[] = [];
    const values: unknown[] = [];
    for (const [sql, value] of conditions) {
      values.push(value);
      where.push(sql.replace('?', `$${values.length}`));
    }
    if (after) {
      values.push(after.insert, after.id);
      where.push(`(${timeColumn}, id) < ($${values.length - 1}::timestamptz, $${values.length})`);
    }
    values.push(limit);
    const sql = `SELECT doc, raw FROM ${table} ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY ${timeColumn} DESC, id DESC LIMIT $${values.length}`;
    return (await this.query<DocRow>(sql, values)).rows.map((row) => docOf<T>(row)!);
  }

  listEvents(filter: EventFilter, limit: number, after: EventPosition | null): Promise<EventRecord[]> {
    const conditions: [string, unknown][] = [];
    for (const [key, column] of FILTER_COLUMNS) {
      const value = filter[key];
      if (value !== undefined) conditions.push([`${column} = ?`, value]);
    }
    return this.page<EventRecord>('events', 'insert_time', conditions, limit, after);
  }

  async eraseProfile(id: string): Promise<ErasedCounts | null> {
    return this.transaction(async (client) => {
      const key = storable(id);
      const locked = await client.query({ ...SQL.lockProfile, values: [key] });
      if (locked.rowCount === 0) return null;
      const count = async (statement: Statement) =>
        (await client.query({ ...statement, values: [key] })).rowCount ?? 0;
      const events = (await count(SQL.eraseSessionEvents)) + (await count(SQL.eraseProfileEvents));
      const sessions = await count(SQL.eraseSessions);
      const profiles = await count(SQL.eraseProfile);
      return { profiles, sessions, events };
    });
  }

  async putEventType(record: EventTypeRecord): Promise<void> {
    // `json`, not jsonb: the text is kept as given, so `json_schema` keeps its key order.
    await this.query(SQL.putEventType, [record.event_type, JSON.stringify(record)]);
  }

  async getEventType(eventType: string): Promise<EventTypeRecord | null> {
    const row = (await this.query<{ doc: EventTypeRecord }>(SQL.getEventType, [eventType])).rows[0];
    return row?.doc ?? null;
  }

  async listEventTypes(): Promise<EventTypeRecord[]> {
    return (await this.query<{ doc: EventTypeRecord }>(SQL.listEventTypes)).rows.map((row) => row.doc);
  }

  async deleteEventType(eventType: string): Promise<boolean> {
    return ((await this.query(SQL.deleteEventType, [eventType])).rowCount ?? 0) > 0;
  }

  async putRejected(record: RejectedRecord): Promise<void> {
    await this.query(SQL.putRejected, [
      record.id,
      record.time,
      record.source_id,
      record.event_types,
      ...columns(record),
    ]);
  }

  async getRejected(id: string): Promise<RejectedRecord | null> {
    return docOf<RejectedRecord>((await this.query<DocRow>(SQL.getRejected, [id])).rows[0]);
  }

  listRejected(
    filter: RejectedFilter,
    limit: number,
    after: EventPosition | null,
  ): Promise<RejectedRecord[]> {
    const conditions: [string, unknown][] = [];
    if (filter.sourceId !== undefined) conditions.push(['source_id = ?', filter.sourceId]);
    if (filter.eventType !== undefined) conditions.push(['event_types @> ARRAY[?::text]', filter.eventType]);
    return this.page<RejectedRecord>('rejected', 'time', conditions, limit, after);
  }

  async deleteRejected(id: string): Promise<boolean> {
    return ((await this.query(SQL.deleteRejected, [id])).rowCount ?? 0) > 0;
  }

  async pruneRejected(before: string, keep: number): Promise<number> {
    return (await this.query(SQL.pruneRejected, [before, keep])).rowCount ?? 0;
  }
}
