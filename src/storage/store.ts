/**
 * The store port: what the pipeline and the routes ask of storage, implemented by the twin adapters
 * in sqlite/ and postgres/ and checked by one contract suite (test/storage/contract.ts). Long because
 * it is the whole port, one documented method per job, in one place.
 */
import type {
  CommitResult,
  EventRecord,
  EventSource,
  EventTypeRecord,
  IdentityKey,
  ProfileRecord,
  ProfileRule,
  RejectedRecord,
  StoredSession,
  WriteSet,
} from '../model/records.js';
import type {
  DeliveryPosition,
  DeliveryState,
  DestinationRecord,
  EventSelector,
  EventSlice,
  FailedBatch,
  InFlightBatch,
  Settlement,
} from '../model/destinations.js';

export interface EventFilter {
  profileId?: string;
  sessionId?: string;
  type?: string;
  sourceId?: string;
  /** Events whose `metadata.client_id` is this. */
  clientId?: string;
  /** Events whose `metadata.time.create` is at or after this time (ISO 8601 UTC, as `isoTime` writes). */
  since?: string;
  /** Events whose `metadata.time.create` is before this time (same form). */
  until?: string;
}

/** Position after which a page starts (exclusive), in the order newest first: (time, id). */
export interface EventPosition {
  insert: string;
  id: string;
}

/**
 * A change of an event source or an event type, made by any process sharing the store. `id` null
 * stands for every record of that kind (changes may have been missed, e.g. across a reconnect).
 */
export interface StoreChange {
  /** For `profile_rule`, `id` is the event type whose rules changed. */
  kind: 'source' | 'event_type' | 'profile_rule' | 'destination';
  id: string | null;
}

/** Events counted by `Store.countEvents`: inserted in [since, until), of one source or type if given. */
export interface EventCountQuery {
  /** ISO 8601 UTC, as `isoTime` writes; compared with `metadata.time.insert`. */
  since: string;
  until: string;
  sourceId?: string;
  type?: string;
  /** How many event types are counted by name (the most frequent); the others are counted together. */
  top: number;
}

/** Events per minute and type (docs/api.md#event-stats). */
export interface EventCounts {
  /**
   * One row per minute and type: `minute` is the minute of the insert time, `YYYY-MM-DDTHH:MM` in
   * UTC; `type` is null for the types beyond the `top` most frequent, counted together.
   */
  rows: { minute: string; type: string | null; count: number }[];
  /** How many types are counted together (type null). */
  otherTypes: number;
}

export interface ProfileRuleFilter {
  eventType?: string;
}

export interface RejectedFilter {
  eventType?: string;
  sourceId?: string;
}

export interface ErasedCounts {
  profiles: number;
  sessions: number;
  events: number;
  identities: number;
  aliases: number;
  rejected: number;
}

/**
 * The one storage interface. Adapters own SQL, transactions and row mapping; callers see records only.
 * Every method may reject with `StoreUnavailableError` when the database cannot be reached.
 */
export interface Store {
  /** Applies migrations; must be called once before use. */
  open(): Promise<void>;
  /** Commits what is queued, then releases the database. */
  close(): Promise<void>;
  /** True when the database answers. */
  ping(): Promise<boolean>;

  putSource(source: EventSource): Promise<void>;
  getSource(id: string): Promise<EventSource | null>;
  listSources(): Promise<EventSource[]>;
  deleteSource(id: string): Promise<boolean>;

  getSession(id: string): Promise<StoredSession | null>;
  /** The profile with this id, or the survivor when the id is an alias of a merged profile. */
  getProfile(id: string): Promise<ProfileRecord | null>;
  /** The profile holding an identity (its value already normalised), or null. */
  findProfileByIdentity(key: IdentityKey): Promise<ProfileRecord | null>;
  getEvent(id: string): Promise<EventRecord | null>;
  /**
   * Events matching the filter, newest first by (metadata.time.insert, id), after `after`. A create
   * time range reads the events inserted near it and those marked off band (src/storage/event-band.ts),
   * never the whole store.
   */
  listEvents(filter: EventFilter, limit: number, after: EventPosition | null): Promise<EventRecord[]>;
  /**
   * Stored events counted per minute of their insert time and per type, the `top` most frequent
   * types of the range by name and the others together, so that the answer is bounded by the
   * range's minutes whatever the number of types. Reads the events inserted in the range.
   */
  countEvents(query: EventCountQuery): Promise<EventCounts>;
  /**
   * Deletes a profile (an alias names its survivor), the sessions bound to it and their events, its
   * identities and aliases, and the quarantined requests naming it or one of its sessions; null when
   * the profile is unknown.
   */
  eraseProfile(id: string): Promise<ErasedCounts | null>;
  /**
   * Retention: deletes some of the oldest events inserted before `before`, about `maxEvents` of
   * them (a store may go over when events are kept together, never by more than one request's), in
   * one short transaction. Answers how many were deleted: 0 when none is left. Safe to call from
   * several processes at once.
   */
  deleteEventsBefore(before: string, maxEvents: number): Promise<number>;

  /**
   * Profile rules, in the order they were first saved (a replaced rule keeps its place). `put`
   * answers the event type the rule had before (null for a new rule); `delete` the event type of the
   * deleted rule, or null when there was none.
   */
  putProfileRule(rule: ProfileRule): Promise<string | null>;
  getProfileRule(id: string): Promise<ProfileRule | null>;
  listProfileRules(filter: ProfileRuleFilter): Promise<ProfileRule[]>;
  deleteProfileRule(id: string): Promise<string | null>;

  /** Validation schemas by exact event type; the stored record keeps its `json_schema` key order. */
  putEventType(record: EventTypeRecord): Promise<void>;
  getEventType(eventType: string): Promise<EventTypeRecord | null>;
  listEventTypes(): Promise<EventTypeRecord[]>;
  deleteEventType(eventType: string): Promise<boolean>;

  /**
   * The rejected-request quarantine, newest first by (time, id). `putRejected` replaces a record of
   * the same id, and answers the bytes the record takes.
   */
  putRejected(record: RejectedRecord): Promise<number>;
  /**
   * Replaces the stored record of the same id (a replay refused again); false, and nothing is
   * written, when there is none: a record replayed, erased or pruned meanwhile is not put back.
   */
  updateRejected(record: RejectedRecord): Promise<boolean>;
  getRejected(id: string): Promise<RejectedRecord | null>;
  listRejected(filter: RejectedFilter, limit: number, after: EventPosition | null): Promise<RejectedRecord[]>;
  deleteRejected(id: string): Promise<boolean>;
  /**
   * Deletes records older than `before`, all but the newest `keep`, and the oldest beyond the newest
   * `maxBytes`; returns how many went.
   */
  pruneRejected(before: string, keep: number, maxBytes: number): Promise<number>;

  /**
   * Optional: calls `listener` after any process sharing the store changed an event source, an
   * event type or a profile rule, so that caches above the store forget the entry at once instead of at the end of
   * its TTL. Delivery is best effort (the TTLs stay the bound). Returns the function that
   * unsubscribes. A store used by one process only leaves it out: that process already forgets
   * what it changes itself.
   */
  watchChanges?(listener: (change: StoreChange) => void): () => void;

  /** Destinations and the delivery of stored events to them. */
  readonly destinations: DestinationStore;

  /** Write sets waiting for a commit (for metrics). */
  readonly queueDepth: number;

  /**
   * Commits one request's write set durably (group commit: many requests share one transaction).
   * Resolves only once the transaction is committed. Rejects with `WriteQueueFullError` when the
   * write queue is full. The profile's visit and change are applied to the profile as stored at
   * that moment; its `identify` operations attach identities by the store's unique keys, merging
   * the profile into the one that held an identity first (src/model/identities.ts,
   * profile-merge.ts): its sessions, events, identities, aliases and quarantined requests then name
   * the survivor, and its id becomes an alias of it.
   *
   * Duplicates: an event with a `metadata.client_id` is stored only if no stored event of its source
   * has that client id and no earlier event of the write set has it; otherwise its id is reported in
   * `duplicates`, and the profile operations of that event are not applied. The store decides inside
   * the committing transaction, so this holds for concurrent write sets too, in one process or
   * several. Events without a client id are not checked.
   */
  commit(writeSet: WriteSet): Promise<CommitResult>;
}

/**
 * Destinations and their delivery state. Delivery reads the stored events in commit order by
 * position (model/destinations.ts): every event committed after a position is found at or after it,
 * whatever order concurrent transactions commit in. Whoever delivers holds the destination's lease;
 * the writes of delivery state take effect only for the owner of the lease.
 */
export interface DestinationStore {
  /**
   * Creates a destination, its cursor at the head (only events committed after it are delivered),
   * or replaces the record of an existing one, keeping its delivery state. True when created.
   */
  put(record: DestinationRecord): Promise<boolean>;
  get(id: string): Promise<DestinationRecord | null>;
  /** Every destination, by id. */
  list(): Promise<DestinationRecord[]>;
  /** Deletes a destination with its delivery state and failed list. */
  delete(id: string): Promise<boolean>;
  state(id: string): Promise<DeliveryState | null>;
  /**
   * Gives `owner` the destination's delivery for `ms` from now, when nobody else holds an unexpired
   * lease; an owner renews its own. The state when leased, null otherwise (or when unknown).
   */
  lease(id: string, owner: string, ms: number): Promise<DeliveryState | null>;
  /** Ends every lease `owner` holds (a process stopping). */
  release(owner: string): Promise<void>;
  /** Stored events from `from` on, in commit order, matching `selector`, at most `limit`. */
  read(selector: EventSelector, from: DeliveryPosition, limit: number): Promise<EventSlice>;
  /** The stored events among `ids`, in that order (erased ones are left out). */
  readIds(ids: string[]): Promise<Omit<EventSlice, 'next'>>;
  /** How many stored events from `from` on match `selector`. */
  count(selector: EventSelector, from: DeliveryPosition): Promise<number>;
  /** Records the batch about to be sent; false unless `owner` holds the lease and none is in flight. */
  begin(id: string, owner: string, batch: InFlightBatch): Promise<boolean>;
  /**
   * Settles the batch in flight: delivered or failed moves the cursor to its end (failed adds it to
   * the failed list); retry records the error and when to try again. False unless `owner` holds the
   * lease and `batchId` is the batch in flight.
   */
  settle(id: string, owner: string, batchId: string, settlement: Settlement): Promise<boolean>;
  /** Moves the cursor over events that matched nothing, when no batch is in flight. */
  advance(id: string, owner: string, to: DeliveryPosition): Promise<boolean>;
  /** The failed list, newest first by (failed_at, batch_id), after `after`. */
  listFailed(id: string, limit: number, after: EventPosition | null): Promise<FailedBatch[]>;
  getFailed(id: string, batchId: string): Promise<FailedBatch | null>;
  /** A failed batch sent again: delivered removes it (and counts its events), else its error is kept. */
  resolveFailed(
    id: string,
    batchId: string,
    result: { delivered: true } | { error: string },
  ): Promise<boolean>;
}

/** Every error a store raises on purpose (the adapters translate their drivers' errors to these). */
export class StoreError extends Error {}
/** The database cannot be reached or refuses to serve now: worth a retry later. */
export class StoreUnavailableError extends StoreError {}
/** Too many write sets are waiting for a commit. */
export class WriteQueueFullError extends StoreError {}
/** The embedded store's data folder is used by another process (docs/api.md#one-process-per-data-folder). */
export class DataDirInUseError extends StoreError {
  constructor(readonly dataDir: string) {
    super(
      `another process is using the data folder ${dataDir}: stop it first (one process per TRACK_DATA_DIR)`,
    );
  }
}
/** The database lacks schema migrations and the store was told not to apply them. */
export class MigrationsMissingError extends StoreError {
  constructor(readonly pending: number[]) {
    super(`the database lacks migrations ${pending.join(', ')}`);
  }
}
