/**
 * The embedded (SQLite) adapter of the store port (store.ts). Long because it implements the whole
 * port: each method is a few lines that hand over to the writer thread (writes.ts) or to reads.ts.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type {
  CommitResult,
  EventRecord,
  EventSource,
  EventTypeRecord,
  IdentityKey,
  ProfileRecord,
  ProfileRule,
  RejectedRecord,
  SessionRecord,
  StoredSession,
  WriteSet,
} from '../../model/records.js';
import { withLatestRequest } from '../../model/sessions.js';
import { GroupCommitter, type ItemOutcome } from '../group-commit.js';
import type {
  ErasedCounts,
  EventCountQuery,
  EventCounts,
  EventFilter,
  EventPosition,
  ProfileRuleFilter,
  RejectedFilter,
  Store,
} from '../store.js';
import { profileOf } from '../../model/profiles.js';
import { StoreUnavailableError } from '../store.js';
import { parseDoc, parseDocs } from '../documents.js';
import { pageQuery, rejectedConditions, type Dialect } from '../paging.js';
import { SqliteDestinations } from './destinations.js';
import { eventOfRun, pageOfRuns, runQueries } from './reads.js';
import { countEventsStatement } from './event-counts.js';
import { readStatements } from './statements.js';
import { holdsDataDirLock, preparePrivateFiles } from './connection.js';
import { fromShape, translate } from './errors.js';
import { SessionCache } from './session-cache.js';
import { shareShapes } from './change-text.js';
import { toRow, type RowOutcome, type WriteRow } from './write-set.js';
import type { WriteOp } from './writer-protocol.js';
import { WriterThread } from './writer-thread.js';
import type { WriteOps } from './writes.js';

export interface SqliteOptions {
  dataDir: string;
  sync: 'normal' | 'full';
  writeQueueLimit: number;
}

type Statement = Database.Statement<unknown[], unknown>;

const dialect: Dialect = {
  param: () => '?',
  docColumns: 'doc',
  timeCast: '',
  hasEventType: (param) => `EXISTS (SELECT 1 FROM json_each(rejected.event_types) WHERE value = ${param})`,
};

interface QueuedWrite {
  row: WriteRow;
  /** The profile the write set creates, returned as the commit's profile. */
  created: ProfileRecord | null;
  /** What the session cache learns when it commits. */
  session: WriteSet['session'];
  touch: WriteSet['touch'];
}

/**
 * The embedded store: one SQLite file in WAL mode, used by one process. Reads run here on a
 * read-only connection; every write goes to the writer thread (writer.ts), which commits many
 * requests' write sets in one transaction (group commit) while this thread goes on serving.
 */
export class SqliteStore implements Store {
  private db!: Database.Database;
  private stmt!: ReturnType<typeof readStatements>;
  private writer: WriterThread | null = null;
  private readonly listStatements = new Map<string, Statement>();
  private readonly committer: GroupCommitter<QueuedWrite, CommitResult>;
  // Sessions and profiles are read on the tracking path: the writer thread answers them from its
  // warm cache, gathered per turn of the event loop like writes are (any number of batches at once).
  private readonly sessions = lookups((ids) => this.onWriter('readSessions', ids));
  // Only while this process holds the data folder's lock: nothing else writes the sessions then.
  private sessionCache: SessionCache | null = null;
  private readonly profiles = lookups((ids) => this.onWriter('readProfiles', ids));
  readonly destinations = new SqliteDestinations((op, ...args) => this.onWriter(op, ...args));

  constructor(private readonly options: SqliteOptions) {
    this.committer = new GroupCommitter(
      async (items) => {
        let outcomes: RowOutcome[];
        try {
          const rows = items.map((item) => item.row);
          // Rules give most rows of a batch the same shapes: the message holds their text once.
          const changes = rows.flatMap(([, profile]) => (profile?.[3] ? [profile[3]] : []));
          outcomes = await this.onWriter('commit', rows, shareShapes(changes));
        } catch (error) {
          this.sessionCache?.clear();
          throw error;
        }
        return outcomes.map((outcome, i): ItemOutcome<CommitResult> => {
          const item = items[i]!;
          this.cacheOutcome(item, outcome);
          if ('error' in outcome) return { ok: false, error: fromShape(outcome.error) };
          if (!outcome.ok) return { ok: true, value: outcome };
          const profile = outcome.profile
            ? profileOf(JSON.parse(outcome.profile) as ProfileRecord)
            : item.created;
          const { changed: profileChanged, merges = [], notes = [], duplicates } = outcome;
          return { ok: true, value: { ok: true, profile, profileChanged, merges, notes, duplicates } };
        });
      },
      options.writeQueueLimit,
      { maxInFlight: 2 },
    );
  }

  /** What a committed (or refused) write set changes of the sessions the cache keeps. */
  private cacheOutcome(item: QueuedWrite, outcome: RowOutcome): void {
    const cache = this.sessionCache;
    if (!cache) return;
    if (outcome.ok && outcome.merges && outcome.merges.length > 0) {
      // A merge moved every session of the merged profile to the survivor.
      cache.clear();
      return;
    }
    const { session, touch } = item;
    if (!outcome.ok) {
      if (session) cache.delete(session.record.id);
      if (touch) cache.delete(touch.id);
      return;
    }
    if (session) cache.written(session.record, session.expectVersion, item.row[0]![2].length);
    if (touch) cache.touched(touch.id, touch.at);
  }

  get file(): string {
    return join(this.options.dataDir, 'collector.db');
  }

  async open(): Promise<void> {
    preparePrivateFiles(this.options.dataDir, this.file);
    // The writer creates the file and applies the migrations before anything reads.
    const alone = holdsDataDirLock(this.options.dataDir);
    this.writer = await WriterThread.start({ file: this.file, sync: this.options.sync, hold: alone });
    this.sessionCache = alone ? new SessionCache() : null;
    try {
      this.db = new Database(this.file, { readonly: true });
      this.db.pragma('busy_timeout = 5000');
      this.stmt = readStatements(this.db);
      this.destinations.attach(this.db);
    } catch (error) {
      await this.writer.close();
      this.writer = null;
      throw error;
    }
  }

  /** Runs an operation on the writer thread; a write resolves once it has committed. */
  private onWriter<K extends WriteOp>(
    op: K,
    ...args: Parameters<WriteOps[K]>
  ): Promise<ReturnType<WriteOps[K]>> {
    if (!this.writer) return Promise.reject(new StoreUnavailableError('the store is closed'));
    return this.writer.call(op, ...args);
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
    this.db.close();
    await this.writer?.close();
    this.writer = null;
  }

  ping(): Promise<boolean> {
    return this.run(() => this.db.open && this.writer?.alive === true && this.stmt.ping.get() === 1);
  }

  commit(writeSet: WriteSet): Promise<CommitResult> {
    const created = writeSet.profile?.op === 'create' ? writeSet.profile.record : null;
    const { session, touch } = writeSet;
    return this.committer.submit({ row: toRow(writeSet), created, session, touch });
  }

  get queueDepth(): number {
    return this.committer.depth;
  }

  putSource(source: EventSource): Promise<void> {
    return this.onWriter('putSource', source.id, JSON.stringify(source));
  }

  getSource(id: string): Promise<EventSource | null> {
    return this.run(() => parseDoc<EventSource>(this.stmt.getSource.get(id)));
  }

  listSources(): Promise<EventSource[]> {
    return this.run(() => parseDocs<EventSource>(this.stmt.listSources.all()));
  }

  deleteSource(id: string): Promise<boolean> {
    return this.onWriter('deleteSource', id);
  }

  async getSession(id: string): Promise<StoredSession | null> {
    const cache = this.sessionCache;
    const cached = cache?.get(id);
    if (cached) return cached;
    const token = cache?.reads(id);
    const row = await this.sessions.submit(id);
    if (!row) {
      if (token) cache!.read(id, token, null);
      return null;
    }
    const [doc, version, latest] = row;
    const record = JSON.parse(doc) as SessionRecord;
    if (token) cache!.read(id, token, { record, version, latest, chars: doc.length });
    return { record: withLatestRequest(record, latest), version };
  }

  async getProfile(id: string): Promise<ProfileRecord | null> {
    const doc = parseDoc<ProfileRecord>(await this.profiles.submit(id));
    return doc && profileOf(doc);
  }

  // On the writer, which holds the latest changes of profiles (held-profiles.ts).
  async findProfileByIdentity(key: IdentityKey): Promise<ProfileRecord | null> {
    const doc = parseDoc<ProfileRecord>(await this.onWriter('readProfileByIdentity', key.type, key.value));
    return doc && profileOf(doc);
  }

  putProfileRule(rule: ProfileRule): Promise<string | null> {
    return this.onWriter('putProfileRule', rule.id, rule.event_type, JSON.stringify(rule));
  }

  getProfileRule(id: string): Promise<ProfileRule | null> {
    return this.run(() => parseDoc<ProfileRule>(this.stmt.getProfileRule.get(id)));
  }

  listProfileRules(filter: ProfileRuleFilter): Promise<ProfileRule[]> {
    return this.run(() =>
      parseDocs<ProfileRule>(
        filter.eventType === undefined
          ? this.stmt.listProfileRules.all()
          : this.stmt.listProfileRulesOfType.all(filter.eventType),
      ),
    );
  }

  deleteProfileRule(id: string): Promise<string | null> {
    return this.onWriter('deleteProfileRule', id);
  }

  getEvent(id: string): Promise<EventRecord | null> {
    return this.run(() =>
      eventOfRun(this.stmt.getEventRun.get(id) as [string, string | null] | undefined, id),
    );
  }

  private statement(sql: string): Statement {
    let statement = this.listStatements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.listStatements.set(sql, statement);
    }
    return statement;
  }

  listEvents(filter: EventFilter, limit: number, after: EventPosition | null): Promise<EventRecord[]> {
    return this.run(() => {
      const queries = runQueries(filter, after).map(({ sql, params }) => ({
        statement: this.statement(sql),
        params,
      }));
      return pageOfRuns(queries, filter, limit, after);
    });
  }

  countEvents(query: EventCountQuery): Promise<EventCounts> {
    return this.run(() => {
      const { sql, params } = countEventsStatement(query);
      type Row = [minute: string, type: string | null, count: number, otherTypes: number];
      const rows = this.statement(sql)
        .raw()
        .all(...params) as Row[];
      return {
        rows: rows.map(([minute, type, count]) => ({ minute, type, count })),
        otherTypes: rows[0]?.[3] ?? 0,
      };
    });
  }

  putEventType(record: EventTypeRecord): Promise<void> {
    return this.onWriter('putEventType', record.event_type, JSON.stringify(record));
  }

  getEventType(eventType: string): Promise<EventTypeRecord | null> {
    return this.run(() => parseDoc<EventTypeRecord>(this.stmt.getEventType.get(eventType)));
  }

  listEventTypes(): Promise<EventTypeRecord[]> {
    return this.run(() => parseDocs<EventTypeRecord>(this.stmt.listEventTypes.all()));
  }

  deleteEventType(eventType: string): Promise<boolean> {
    return this.onWriter('deleteEventType', eventType);
  }

  putRejected(record: RejectedRecord): Promise<number> {
    const eventTypes = JSON.stringify(record.event_types);
    return this.onWriter(
      'putRejected',
      record.id,
      record.time,
      record.source_id,
      record.session_id,
      record.profile_id ?? null,
      eventTypes,
      JSON.stringify(record),
    );
  }

  updateRejected(record: RejectedRecord): Promise<boolean> {
    return this.onWriter('updateRejected', record.id, JSON.stringify(record));
  }

  getRejected(id: string): Promise<RejectedRecord | null> {
    return this.run(() => parseDoc<RejectedRecord>(this.stmt.getRejected.get(id)));
  }

  listRejected(
    filter: RejectedFilter,
    limit: number,
    after: EventPosition | null,
  ): Promise<RejectedRecord[]> {
    return this.run(() => {
      const { sql, params } = pageQuery(
        dialect,
        'rejected',
        'time',
        rejectedConditions(dialect, filter),
        limit,
        after,
      );
      return parseDocs<RejectedRecord>(
        this.statement(sql)
          .pluck()
          .all(...params),
      );
    });
  }

  deleteRejected(id: string): Promise<boolean> {
    return this.onWriter('deleteRejected', id);
  }

  deleteEventsBefore(before: string, maxEvents: number): Promise<number> {
    return this.onWriter('deleteEventsBefore', before, maxEvents);
  }

  pruneRejected(before: string, keep: number, maxBytes: number): Promise<number> {
    return this.onWriter('pruneRejected', before, keep, maxBytes);
  }

  async eraseProfile(id: string): Promise<ErasedCounts | null> {
    try {
      return await this.onWriter('eraseProfile', id);
    } finally {
      // Its sessions are gone (they are not tracked one by one).
      this.sessionCache?.clear();
    }
  }
}

/** Point lookups batched by the group-commit mechanism, each key answered with its own value. */
function lookups<V>(read: (keys: string[]) => Promise<V[]>): GroupCommitter<string, V> {
  const batch = async (keys: string[]) =>
    (await read(keys)).map((value): ItemOutcome<V> => ({ ok: true, value }));
  return new GroupCommitter(batch, Infinity, { maxInFlight: Infinity });
}
