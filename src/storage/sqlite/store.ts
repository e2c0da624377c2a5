import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type {
  CommitResult,
  EventRecord,
  EventSource,
  EventTypeRecord,
  ProfileRecord,
  RejectedRecord,
  StoredSession,
  WriteSet,
} from '../../domain/records.js';
import { applyVisit } from '../../domain/records.js';
import { GroupCommitter, type ItemOutcome } from '../group-commit.js';
import type { ErasedCounts, EventFilter, EventPosition, RejectedFilter, Store } from '../store.js';
import { StoreUnavailableError } from '../store.js';
import { Checkpointer } from './checkpointer.js';
import { migrations } from './migrations.js';

export interface SqliteOptions {
  dataDir: string;
  sync: 'normal' | 'full';
  writeQueueLimit: number;
}

const UNAVAILABLE_CODES = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|READONLY|CORRUPT|NOTADB)/;

function translate(error: unknown): unknown {
  // better-sqlite3 throws a TypeError on a closed connection: the store cannot be reached.
  if (error instanceof TypeError && /database connection is not open/i.test(error.message)) {
    return new StoreUnavailableError(error.message);
  }
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && UNAVAILABLE_CODES.test(code)) {
    return new StoreUnavailableError(`${code}: ${(error as Error).message}`);
  }
  return error;
}

type Statement = Database.Statement<unknown[], unknown>;
const FILTER_COLUMNS: [keyof EventFilter, string][] = [
  ['profileId', 'profile_id'],
  ['sessionId', 'session_id'],
  ['type', 'type'],
  ['sourceId', 'source_id'],
];

/** The embedded store: one SQLite file in WAL mode, written by one process through group commit. */
export class SqliteStore implements Store {
  private db!: Database.Database;
  private stmt!: ReturnType<SqliteStore['prepare']>;
  private readonly listStatements = new Map<string, Statement>();
  private readonly committer: GroupCommitter<WriteSet, CommitResult>;
  private writeBatch!: (items: WriteSet[]) => ItemOutcome<CommitResult>[];
  private checkpointer: Checkpointer | null = null;

  constructor(private readonly options: SqliteOptions) {
    this.committer = new GroupCommitter((items) => {
      try {
        return this.writeBatch(items);
      } catch (error) {
        throw translate(error);
      }
    }, options.writeQueueLimit);
  }

  get file(): string {
    return join(this.options.dataDir, 'collector.db');
  }

  async open(): Promise<void> {
    mkdirSync(this.options.dataDir, { recursive: true });
    const db = new Database(this.file);
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${this.options.sync === 'full' ? 'FULL' : 'NORMAL'}`);
    db.pragma('busy_timeout = 5000');
    const applied = db.pragma('user_version', { simple: true }) as number;
    for (let i = applied; i < migrations.length; i++) {
      db.transaction(() => {
        db.exec(migrations[i]!);
        db.pragma(`user_version = ${i + 1}`);
      })();
    }
    this.db = db;
    this.stmt = this.prepare();
    db.pragma('temp_store = MEMORY');
    // Checkpoints run in a worker thread (checkpointer.ts), not inside request commits.
    db.pragma('wal_autocheckpoint = 0');
    db.pragma(`journal_size_limit = ${64 * 1024 * 1024}`);
    this.checkpointer = new Checkpointer(this.file);
    // Many requests' write sets in one transaction. Conflicts are found before a write set writes
    // anything, so they need no savepoint; any other failure rolls the batch back and each write set
    // is then tried alone, so one bad write set never fails the others.
    const batch = db.transaction((items: WriteSet[]) => items.map((ws) => this.apply(ws)));
    const single = db.transaction((ws: WriteSet) => this.apply(ws));
    this.writeBatch = (items) => {
      try {
        const outcomes = batch(items).map((value): ItemOutcome<CommitResult> => ({ ok: true, value }));
        if (this.checkpointer?.walTooLarge()) db.pragma('wal_checkpoint(RESTART)');
        return outcomes;
      } catch (error) {
        if (items.length === 1) return [{ ok: false, error: translate(error) }];
        return items.map((ws): ItemOutcome<CommitResult> => {
          try {
            return { ok: true, value: single(ws) };
          } catch (itemError) {
            return { ok: false, error: translate(itemError) };
          }
        });
      }
    };
  }

  private prepare() {
    const db = this.db;
    return {
      putSource: db.prepare(
        'INSERT INTO sources (id, doc) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc',
      ),
      getSource: db.prepare('SELECT doc FROM sources WHERE id = ?').pluck(),
      listSources: db.prepare('SELECT doc FROM sources ORDER BY id').pluck(),
      deleteSource: db.prepare('DELETE FROM sources WHERE id = ?'),
      getSession: db.prepare('SELECT doc, version FROM sessions WHERE id = ?'),
      insertSession: db.prepare(
        'INSERT INTO sessions (id, profile_id, version, doc) VALUES (?, ?, 1, ?) ON CONFLICT (id) DO NOTHING',
      ),
      updateSession: db.prepare(
        'UPDATE sessions SET profile_id = ?, doc = ?, version = version + 1 WHERE id = ? AND version = ?',
      ),
      getProfile: db.prepare('SELECT doc FROM profiles WHERE id = ?').pluck(),
      insertProfile: db.prepare('INSERT INTO profiles (id, doc) VALUES (?, ?)'),
      updateProfile: db.prepare('UPDATE profiles SET doc = ? WHERE id = ?'),
      insertEvent: db.prepare(
        'INSERT INTO events (id, insert_time, type, source_id, session_id, profile_id, doc) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      getEvent: db.prepare('SELECT doc FROM events WHERE id = ?').pluck(),
      eraseSessionEvents: db.prepare(
        'DELETE FROM events WHERE session_id IN (SELECT id FROM sessions WHERE profile_id = ?)',
      ),
      eraseProfileEvents: db.prepare('DELETE FROM events WHERE profile_id = ?'),
      eraseSessions: db.prepare('DELETE FROM sessions WHERE profile_id = ?'),
      eraseProfile: db.prepare('DELETE FROM profiles WHERE id = ?'),
      ping: db.prepare('SELECT 1').pluck(),
      putEventType: db.prepare(
        'INSERT INTO event_types (event_type, doc) VALUES (?, ?) ON CONFLICT (event_type) DO UPDATE SET doc = excluded.doc',
      ),
      getEventType: db.prepare('SELECT doc FROM event_types WHERE event_type = ?').pluck(),
      listEventTypes: db.prepare('SELECT doc FROM event_types ORDER BY event_type').pluck(),
      deleteEventType: db.prepare('DELETE FROM event_types WHERE event_type = ?'),
      putRejected: db.prepare(
        'INSERT INTO rejected (id, time, source_id, event_types, doc) VALUES (?, ?, ?, ?, ?)',
      ),
      getRejected: db.prepare('SELECT doc FROM rejected WHERE id = ?').pluck(),
      deleteRejected: db.prepare('DELETE FROM rejected WHERE id = ?'),
      pruneRejectedAge: db.prepare('DELETE FROM rejected WHERE time < ?'),
      pruneRejectedCount: db.prepare(
        'DELETE FROM rejected WHERE id IN (SELECT id FROM rejected ORDER BY time DESC, id DESC LIMIT -1 OFFSET ?)',
      ),
    };
  }

  /**
   * Writes one write set inside the batch transaction. Everything that can conflict is checked before
   * the first write, so a conflicting write set leaves no trace.
   */
  private apply(ws: WriteSet): CommitResult {
    const s = this.stmt;
    let profile: ProfileRecord | null = null;
    if (ws.profile?.op === 'visit') {
      const doc = s.getProfile.get(ws.profile.id) as string | undefined;
      if (doc === undefined) return { ok: false, conflict: 'profile' };
      profile = applyVisit(JSON.parse(doc) as ProfileRecord, ws.profile.at);
    } else if (ws.profile?.op === 'create') {
      profile = ws.profile.record;
    }
    if (ws.session) {
      const { record, expectVersion } = ws.session;
      const doc = JSON.stringify(record);
      const profileId = record.profile?.id ?? null;
      const changes =
        expectVersion === null
          ? s.insertSession.run(record.id, profileId, doc).changes
          : s.updateSession.run(profileId, doc, record.id, expectVersion).changes;
      if (changes === 0) return { ok: false, conflict: 'session' };
    }
    if (profile) {
      const doc = JSON.stringify(profile);
      if (ws.profile?.op === 'create') s.insertProfile.run(profile.id, doc);
      else s.updateProfile.run(doc, profile.id);
    }
    for (const e of ws.events) {
      s.insertEvent.run(
        e.id,
        e.metadata.time.insert,
        e.type,
        e.source.id,
        e.session?.id ?? null,
        e.profile?.id ?? null,
        JSON.stringify(e),
      );
    }
    return { ok: true, profile };
  }

  private run<T>(fn: () => T): Promise<T> {
    try {
      return Promise.resolve(fn());
    } catch (error) {
      return Promise.reject(translate(error));
    }
  }

  async close(): Promise<void> {
    if (!this.db?.open) return;
    await this.committer.drain();
    await this.checkpointer?.close();
    this.checkpointer = null;
    try {
      this.db.pragma('wal_checkpoint(TRUNCATE)');
    } catch {
      // Another connection still reads: the log is checkpointed by the next opener instead.
    }
    this.db.close();
  }

  ping(): Promise<boolean> {
    return this.run(() => this.db.open && this.stmt.ping.get() === 1);
  }

  commit(writeSet: WriteSet): Promise<CommitResult> {
    return this.committer.submit(writeSet);
  }

  get queueDepth(): number {
    return this.committer.depth;
  }

  putSource(source: EventSource): Promise<void> {
    return this.run(() => void this.stmt.putSource.run(source.id, JSON.stringify(source)));
  }

  getSource(id: string): Promise<EventSource | null> {
    return this.run(() => parse<EventSource>(this.stmt.getSource.get(id)));
  }

  listSources(): Promise<EventSource[]> {
    return this.run(() => (this.stmt.listSources.all() as string[]).map((d) => JSON.parse(d) as EventSource));
  }

  deleteSource(id: string): Promise<boolean> {
    return this.run(() => this.stmt.deleteSource.run(id).changes > 0);
  }

  getSession(id: string): Promise<StoredSession | null> {
    return this.run(() => {
      const row = this.stmt.getSession.get(id) as { doc: string; version: number } | undefined;
      return row ? { record: JSON.parse(row.doc), version: row.version } : null;
    });
  }

  getProfile(id: string): Promise<ProfileRecord | null> {
    return this.run(() => parse<ProfileRecord>(this.stmt.getProfile.get(id)));
  }

  getEvent(id: string): Promise<EventRecord | null> {
    return this.run(() => parse<EventRecord>(this.stmt.getEvent.get(id)));
  }

  /** One page, newest first by (time column, id), of the docs matching `conditions`. */
  private page(
    table: string,
    timeColumn: string,
    conditions: [string, unknown][],
    limit: number,
    after: EventPosition | null,
  ): string[] {
    const where = conditions.map(([sql]) => sql);
    const params = conditions.map(([, value]) => value);
    if (after) {
      where.push(`(${timeColumn}, id) < (?, ?)`);
      params.push(after.insert, after.id);
    }
    const sql = `SELECT doc FROM ${table} ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY ${timeColumn} DESC, id DESC LIMIT ?`;
    let statement = this.listStatements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql).pluck();
      this.listStatements.set(sql, statement);
    }
    return statement.all(...params, limit) as string[];
  }

  listEvents(filter: EventFilter, limit: number, after: EventPosition | null): Promise<EventRecord[]> {
    return this.run(() => {
      const conditions: [string, unknown][] = [];
      for (const [key, column] of FILTER_COLUMNS) {
        const value = filter[key];
        if (value !== undefined) conditions.push([`${column} = ?`, value]);
      }
      return this.page('events', 'insert_time', conditions, limit, after).map(
        (d) => JSON.parse(d) as EventRecord,
      );
    });
  }

  putEventType(record: EventTypeRecord): Promise<void> {
    return this.run(() => void this.stmt.putEventType.run(record.event_type, JSON.stringify(record)));
  }

  getEventType(eventType: string): Promise<EventTypeRecord | null> {
    return this.run(() => parse<EventTypeRecord>(this.stmt.getEventType.get(eventType)));
  }

  listEventTypes(): Promise<EventTypeRecord[]> {
    return this.run(() =>
      (this.stmt.listEventTypes.all() as string[]).map((d) => JSON.parse(d) as EventTypeRecord),
    );
  }

  deleteEventType(eventType: string): Promise<boolean> {
    return this.run(() => this.stmt.deleteEventType.run(eventType).changes > 0);
  }

  putRejected(record: RejectedRecord): Promise<void> {
    return this.run(
      () =>
        void this.stmt.putRejected.run(
          record.id,
          record.time,
          record.source_id,
          JSON.stringify(record.event_types),
          JSON.stringify(record),
        ),
    );
  }

  getRejected(id: string): Promise<RejectedRecord | null> {
    return this.run(() => parse<RejectedRecord>(this.stmt.getRejected.get(id)));
  }

  listRejected(
    filter: RejectedFilter,
    limit: number,
    after: EventPosition | null,
  ): Promise<RejectedRecord[]> {
    return this.run(() => {
      const conditions: [string, unknown][] = [];
      if (filter.sourceId !== undefined) conditions.push(['source_id = ?', filter.sourceId]);
      if (filter.eventType !== undefined) {
        conditions.push([
          'EXISTS (SELECT 1 FROM json_each(rejected.event_types) WHERE value = ?)',
          filter.eventType,
        ]);
      }
      return this.page('rejected', 'time', conditions, limit, after).map(
        (d) => JSON.parse(d) as RejectedRecord,
      );
    });
  }

  deleteRejected(id: string): Promise<boolean> {
    return this.run(() => this.stmt.deleteRejected.run(id).changes > 0);
  }

  pruneRejected(before: string, keep: number): Promise<number> {
    return this.run(
      () => this.stmt.pruneRejectedAge.run(before).changes + this.stmt.pruneRejectedCount.run(keep).changes,
    );
  }

  eraseProfile(id: string): Promise<ErasedCounts | null> {
    return this.run(() =>
      this.db.transaction((): ErasedCounts | null => {
        const s = this.stmt;
        if (s.getProfile.get(id) === undefined) return null;
        const events = s.eraseSessionEvents.run(id).changes + s.eraseProfileEvents.run(id).changes;
        const sessions = s.eraseSessions.run(id).changes;
        const profiles = s.eraseProfile.run(id).changes;
        return { profiles, sessions, events };
      })(),
    );
  }
}

function parse<T>(doc: unknown): T | null {
  return typeof doc === 'string' ? (JSON.parse(doc) as T) : null;
}
