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
import { readStatements } from './statements.js';
import { preparePrivateFiles } from './connection.js';
import { fromShape, translate } from './errors.js';
import { toRow, type WriteRow } from './write-set.js';
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
  private readonly profiles = lookups((ids) => this.onWriter('readProfiles', ids));
  readonly destinations = new SqliteDestinations((op, ...args) => this.onWriter(op, ...args));

  constructor(private readonly options: SqliteOptions) {
    this.committer = new GroupCommitter(
      async (items) => {
        const outcomes = await this.onWriter(
          'commit',
          items.map((item) => item.row),
        );
        return outcomes.map((outcome, i): ItemOutcome<CommitResult> => {
          if ('error' in outcome) return { ok: false, error: fromShape(outcome.error) };
          if (!outcome.ok) return { ok: true, value: outcome };
          const profile = outcome.profile
            ? profileOf(JSON.parse(outcome.profile) as ProfileRecord)
            : items[i]!.created;
          const { changed: profileChanged, merges = [], notes = [], duplicates } = outcome;
          return { ok: true, value: { ok: true, profile, profileChanged, merges, notes, duplicates } };
        });
      },
      options.writeQueueLimit,
      { maxInFlight: 2 },
    );
  }

  get file(): string {
    return join(this.options.dataDir, 'collector.db');
  }

  async open(): Promise<void> {
    preparePrivateFiles(this.options.dataDir, this.file);
    // The writer creates the file and applies the migrations before anything reads.
    this.writer = await WriterThread.start({ file: this.file, sync: this.options.sync });
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
    return this.committer.submit({ row: toRow(writeSet), created });
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
    const row = await this.sessions.submit(id);
    if (!row) return null;
    return { record: withLatestRequest(JSON.parse(row[0]) as SessionRecord, row[2]), version: row[1] };
  }

  async getProfile(id: string): Promise<ProfileRecord | null> {
    const doc = parseDoc<ProfileRecord>(await this.profiles.submit(id));
    return doc && profileOf(doc);
  }

  findProfileByIdentity(key: IdentityKey): Promise<ProfileRecord | null> {
    return this.run(() => {
      const doc = parseDoc<ProfileRecord>(this.stmt.findByIdentity.get(key.type, key.value));
      return doc && profileOf(doc);
    });
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

  eraseProfile(id: string): Promise<ErasedCounts | null> {
    return this.onWriter('eraseProfile', id);
  }
}

/** Point lookups batched by the group-commit mechanism, each key answered with its own value. */
function lookups<V>(read: (keys: string[]) => Promise<V[]>): GroupCommitter<string, V> {
  const batch = async (keys: string[]) =>
    (await read(keys)).map((value): ItemOutcome<V> => ({ ok: true, value }));
  return new GroupCommitter(batch, Infinity, { maxInFlight: Infinity });
}
