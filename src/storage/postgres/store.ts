/**
 * The PostgreSQL adapter of the store port (store.ts). Long because it implements the whole port:
 * each method is a few lines that hand over to statements.ts, reads.ts, writes.ts and profiles.ts.
 */
import type pg from 'pg';
import type {
  CommitResult,
  EventRecord,
  EventSource,
  EventTypeRecord,
  IdentityKey,
  JsonObject,
  ProfileRecord,
  ProfileRule,
  RejectedRecord,
  SessionRecord,
  StoredSession,
  WriteSet,
} from '../../model/records.js';
import { withLatestRequest } from '../../model/sessions.js';
import { GroupCommitter } from '../group-commit.js';
import { ReadBatch } from './read-batch.js';
import type {
  ErasedCounts,
  EventCountQuery,
  EventCounts,
  EventFilter,
  EventPosition,
  ProfileRuleFilter,
  RejectedFilter,
  Store,
  StoreChange,
} from '../store.js';
import { MigrationsMissingError, StoreUnavailableError } from '../store.js';
import { mergeContext } from '../contexts.js';
import { eventOf } from '../documents.js';
import { createPool, inTransaction, onConnection, type ConnectionOptions } from './connection.js';
import { translate } from './errors.js';
import { migrate, pendingMigrations } from './migrations.js';
import { PostgresDestinations } from './destinations.js';
import type { Query } from './delivery-reads.js';
import { ChangeFeed } from './notify.js';
import { listEvents, listRejected } from './reads.js';
import { countEvents, type CountQuery } from './event-counts.js';
import { docOf, SQL, storable, type DocRow, type Statement } from './statements.js';
import { BatchWrites } from './writes.js';
import { eraseProfile } from './profiles.js';
import { profileOf } from '../../model/profiles.js';

/** Longest a health check waits for the database. */
const PING_TIMEOUT_MS = 2000;

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

/**
 * The shared store: PostgreSQL through a connection pool. Writes go through group commit (one
 * transaction per batch, writes.ts); several collector processes may share the
 * database: sessions are inserted if absent or updated at an expected version, and profile visits
 * are applied on the row locked with SELECT … FOR UPDATE. Changes of event sources and event types
 * are announced to the other processes with NOTIFY (see notify.ts and `watchChanges`).
 */
export class PostgresStore implements Store {
  private pool: pg.Pool | null = null;
  private readonly committer: GroupCommitter<WriteSet, CommitResult>;
  private readonly connection: ConnectionOptions;
  private readonly changes: ChangeFeed;
  /** One statement on any connection of the pool, for the read modules. */
  private readonly reader = ((text: string, values: unknown[]) => this.query(text, values)) as Query;
  readonly destinations = new PostgresDestinations(this.reader, (fn) => this.transaction(fn));

  constructor(private readonly options: PostgresOptions) {
    this.connection = {
      url: options.url,
      connectTimeoutMs: options.connectTimeoutMs ?? 5000,
      statementTimeoutMs: options.statementTimeoutMs ?? 15_000,
    };
    const writes = new BatchWrites(
      (fn) => this.transaction(fn),
      (fn) => this.unwrapped(fn),
    );
    // Two batches commit at once, each on a connection of its own: a batch mostly waits for the
    // server (round trips, the WAL flush), and two batches of one process are no different from
    // batches of two processes, which the locks in id order already keep apart.
    this.committer = new GroupCommitter((items) => writes.writeBatch(items), options.writeQueueLimit, {
      maxInFlight: 2,
    });
    this.changes = new ChangeFeed(this.connection);
  }

  async open(): Promise<void> {
    if (this.pool) return;
    if (this.options.migrateOnStart ?? true) {
      await migrate(this.connection);
    } else {
      const pending = await pendingMigrations(this.connection);
      if (pending.length > 0) {
        throw new MigrationsMissingError(pending);
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
  private query<R extends pg.QueryResultRow>(
    statement: Statement | string,
    values: unknown[] = [],
  ): Promise<pg.QueryResult<R>> {
    const config = typeof statement === 'string' ? { text: statement } : statement;
    return this.translated(() => this.db.query<R>({ ...config, values: values.map(storable) }));
  }

  private transaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return this.translated(() => inTransaction(this.db, fn));
  }

  /**
   * `fn` on a connection outside a transaction: each of its statements commits on its own. `discard`
   * marks the connection as broken by an error `fn` handles itself (connection.ts: onConnection).
   */
  private unwrapped<T>(
    fn: (client: pg.PoolClient, discard: (error: unknown) => void) => Promise<T>,
  ): Promise<T> {
    return this.translated(() => onConnection(this.db, fn));
  }

  /** What `run` answers; driver errors become StoreUnavailableError. */
  private async translated<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
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

  async putSource(source: EventSource): Promise<void> {
    await this.query(SQL.putSource, [source.id, JSON.stringify(source)]);
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

  private readonly sessions = new ReadBatch<StoredSession>(async (ids) => {
    type Row = DocRow & { id: string; version: number; update_time: Date | null };
    const found = new Map<string, StoredSession>();
    for (const row of (await this.query<Row>(SQL.getSessions, [ids])).rows) {
      const record = withLatestRequest(docOf<SessionRecord>(row)!, row.update_time?.toISOString());
      found.set(row.id, { record, version: row.version });
    }
    return found;
  });

  // A merged profile's id is an alias: it answers the survivor (a profile's own id comes first).
  private readonly profiles = new ReadBatch<ProfileRecord>(async (ids) => {
    type Row = DocRow & { key: string; alias: boolean };
    const found = new Map<string, ProfileRecord>();
    const rows = (await this.query<Row>(SQL.getProfiles, [ids])).rows;
    for (const row of rows) if (!row.alias || !found.has(row.key)) found.set(row.key, profileOf(docOf(row)!));
    return found;
  });

  async getSession(id: string): Promise<StoredSession | null> {
    return this.sessions.read(storable(id) as string);
  }

  async getProfile(id: string): Promise<ProfileRecord | null> {
    return this.profiles.read(storable(id) as string);
  }

  async findProfileByIdentity(key: IdentityKey): Promise<ProfileRecord | null> {
    const rows = (await this.query<DocRow>(SQL.findByIdentity, [key.type, key.value])).rows;
    const doc = docOf<ProfileRecord>(rows[0]);
    return doc && profileOf(doc);
  }

  async putProfileRule(rule: ProfileRule): Promise<string | null> {
    // `json`, not jsonb: values are kept as sent (U+0000 included).
    const { rows } = await this.query<{ previous: string | null }>(SQL.putProfileRule, [
      rule.id,
      rule.event_type,
      JSON.stringify(rule),
    ]);
    return rows[0]?.previous ?? null;
  }

  async getProfileRule(id: string): Promise<ProfileRule | null> {
    return (await this.query<{ doc: ProfileRule }>(SQL.getProfileRule, [id])).rows[0]?.doc ?? null;
  }

  async listProfileRules(filter: ProfileRuleFilter): Promise<ProfileRule[]> {
    const { rows } =
      filter.eventType === undefined
        ? await this.query<{ doc: ProfileRule }>(SQL.listProfileRules)
        : await this.query<{ doc: ProfileRule }>(SQL.listProfileRulesOfType, [filter.eventType]);
    return rows.map((row) => row.doc);
  }

  async deleteProfileRule(id: string): Promise<string | null> {
    const { rows } = await this.query<{ event_type: string }>(SQL.deleteProfileRule, [id]);
    return rows[0]?.event_type ?? null;
  }

  async getEvent(id: string): Promise<EventRecord | null> {
    type Row = DocRow & { context: JsonObject | null; context_raw: JsonObject | null };
    const row = (await this.query<Row>(SQL.getEvent, [id])).rows[0];
    const event = docOf<EventRecord>(row);
    if (!event) return null;
    const context = row!.context ?? row!.context_raw;
    return eventOf(context ? mergeContext([event], context)[0]! : event);
  }

  listEvents(filter: EventFilter, limit: number, after: EventPosition | null): Promise<EventRecord[]> {
    return listEvents(this.reader, filter, limit, after);
  }

  countEvents(query: EventCountQuery): Promise<EventCounts> {
    return countEvents(((text: string, values: unknown[]) => this.query(text, values)) as CountQuery, query);
  }

  listRejected(
    filter: RejectedFilter,
    limit: number,
    after: EventPosition | null,
  ): Promise<RejectedRecord[]> {
    return listRejected(this.reader, filter, limit, after);
  }

  async deleteEventsBefore(before: string, maxEvents: number): Promise<number> {
    return (await this.query<{ n: number }>(SQL.deleteEventsBefore, [before, maxEvents])).rows[0]?.n ?? 0;
  }

  async eraseProfile(id: string): Promise<ErasedCounts | null> {
    return this.transaction((client) => eraseProfile(client, id));
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

  async putRejected(record: RejectedRecord): Promise<number> {
    const text = JSON.stringify(record);
    const size = Buffer.byteLength(text);
    await this.query(SQL.putRejected, [
      record.id,
      record.time,
      record.source_id,
      record.session_id,
      record.profile_id ?? null,
      record.event_types,
      text,
      size,
    ]);
    return size;
  }

  async updateRejected(record: RejectedRecord): Promise<boolean> {
    const text = JSON.stringify(record);
    const size = Buffer.byteLength(text);
    return ((await this.query(SQL.updateRejected, [record.id, text, size])).rowCount ?? 0) > 0;
  }

  async getRejected(id: string): Promise<RejectedRecord | null> {
    return docOf<RejectedRecord>((await this.query<DocRow>(SQL.getRejected, [id])).rows[0]);
  }

  async deleteRejected(id: string): Promise<boolean> {
    return ((await this.query(SQL.deleteRejected, [id])).rowCount ?? 0) > 0;
  }

  async pruneRejected(before: string, keep: number, maxBytes: number): Promise<number> {
    return (await this.query(SQL.pruneRejected, [before, keep, maxBytes])).rowCount ?? 0;
  }
}
