/**
 * The stored records (docs/api.md#records) and the write set a request hands to the store: the
 * vocabulary shared by the pipeline (src/domain) and the store adapters (src/storage).
 * Long because it is the whole vocabulary, one documented type per record, in one place.
 */

import type { RULE_OP_NAMES } from './payloads.js';
import type { ProfileOp } from './profile-ops.js';

export type JsonObject = Record<string, unknown>;

export interface Ref {
  id: string;
}

export interface EventSource {
  id: string;
  type: string;
  name: string;
  description: string;
  enabled: boolean;
  transitional: boolean;
  consent: boolean;
  returns_profile: boolean;
  tags: string[];
  /** Requests per second this source may send (per process); absent or null: the global default. */
  rate_limit?: number | null;
}

/**
 * Where an event's `metadata.time.create` comes from (docs/api.md#event-time): the server's receipt,
 * the device's timestamp as sent, that timestamp corrected for the device clock's offset, or the
 * receipt time because the result lay too far ahead.
 */
export type TimeSource = 'server' | 'device' | 'corrected' | 'clamped';

export interface EventRecord {
  id: string;
  type: string;
  properties: JsonObject;
  context: JsonObject;
  source: Ref;
  session: Ref | null;
  profile: Ref | null;
  metadata: {
    /**
     * `insert`: when the service received it; `create`: when it happened, by the server's clock.
     * The pipeline always sets `create`, `source` and `client_id`; they are optional here for records
     * made before they existed, which the stores read back with `create` = `insert`, `source`
     * "server" and `client_id` null (src/storage/documents.ts).
     */
    time: { insert: string; create?: string; source?: TimeSource };
    /** The id the client gave the event, or null. */
    client_id?: string | null;
    ip: string | null;
    status: string;
    profile_less: boolean;
  };
}

/** What a session's first request said about the device (docs/api.md#session), in Tracardi's shape. */
export interface SessionDevice {
  type: 'desktop' | 'mobile' | 'tablet' | 'bot' | 'other';
  geo: { country: { code: string | null } };
}

export interface SessionOs {
  name: string | null;
  version: string | null;
}

/** The browser or app. */
export interface SessionApp {
  name: string | null;
  version: string | null;
  bot: boolean;
}

export interface SessionEnrichment {
  device: SessionDevice;
  os: SessionOs;
  app: SessionApp;
}

export interface SessionRecord {
  id: string;
  profile: Ref | null;
  metadata: { time: { insert: string; update: string } };
  context: JsonObject;
  properties: JsonObject;
  /** Absent when enrichment is off, and on sessions stored before it existed. */
  device?: SessionDevice;
  os?: SessionOs;
  app?: SessionApp;
}

export interface ProfileRecord {
  id: string;
  metadata: {
    time: {
      insert: string;
      update: string;
      visit: { last: string | null; current: string | null; count: number };
    };
  };
  stats: { visits: number };
  traits: { public: JsonObject; private: JsonObject };
  consents: JsonObject;
  segments: unknown[];
  interests: JsonObject;
  /** Identities attached by `identify` operations (docs/api.md#identities). */
  ids: IdentityKey[];
  /** Profiles merged into this one, oldest first (docs/api.md#merging). */
  merged: MergedProfile[];
}

/** An identity of a profile: a type (`email`, `user_id`, …) and its normalised value. */
export interface IdentityKey {
  type: string;
  value: string;
}

/** A profile merged into another: its former id (now an alias) and when. */
export interface MergedProfile {
  id: string;
  time: string;
}

/** A stored session with the version the store uses for optimistic concurrency. */
export interface StoredSession {
  record: SessionRecord;
  version: number;
}

/**
 * What the profile rules of one request do to its profile: for each event, the operations with their
 * values resolved (src/model/profile-ops.ts). The store applies them in order on the profile as it is
 * stored when the request commits, so that concurrent requests never lose an update.
 */
export interface ProfileChange {
  /** The request's time: the profile's `metadata.time.update` when the change alters it. */
  at: string;
  steps: ProfileStep[];
}

/** The operations one event's rules produced; `event` is the event's id. */
export interface ProfileStep {
  event: string;
  ops: ProfileOp[];
}

/**
 * The profile part of a write set.
 * - `create` inserts a new profile (the rules' changes already applied to `record`; `change` then
 *   holds only its `identify` operations).
 * - `visit` records a new visit on a stored profile, then applies `change`.
 * - `keep` applies `change`, if any, to a stored profile; without one it only requires that the
 *   profile still exists (it may have been merged or erased since it was read).
 * Visits and changes are applied by the store on the current stored record, so concurrent requests
 * are all counted exactly; a profile that no longer exists is a conflict: the request re-resolves.
 */
export type ProfileWrite =
  | { op: 'create'; record: ProfileRecord; change?: ProfileChange }
  | { op: 'visit'; id: string; at: string; change?: ProfileChange }
  | { op: 'keep'; id: string; change?: ProfileChange };

/**
 * Everything one request stores, committed atomically.
 * - `session.expectVersion`: null means "must not exist yet" (insert), a number means "update only if
 *   the stored version is still this one". A mismatch is a conflict: the request re-resolves.
 * - `touch`: the latest request of a session that is not rewritten (docs/api.md#session).
 * - `profile`: see ProfileWrite.
 */
export interface WriteSet {
  session?: { record: SessionRecord; expectVersion: number | null };
  /**
   * A stored session this request used without changing its record: its `metadata.time.update`
   * becomes `at` (unless later already). Never a conflict; a session gone meanwhile is left alone.
   */
  touch?: { id: string; at: string };
  profile?: ProfileWrite;
  events: EventRecord[];
  /**
   * How the events' contexts were made (docs/api.md#context-storage): each event's `context` is the
   * request's context deep-merged with the context the event brought itself (`own`, by event id;
   * none: the request's). A store may keep the request's context once for the write set and each
   * event's own context beside it, instead of the merged context in every event
   * (src/storage/contexts.ts). Absent: every event is stored with its context as it is.
   */
  contexts?: EventContexts;
  /** The caller needs the whole profile as the write set leaves it (else only its id, after a merge). */
  answerProfile?: boolean;
  /**
   * The id of the quarantined request this write set replays (docs/api.md#replay): the store deletes
   * its record in the same transaction, and writes nothing when the record is gone (claimed by
   * another replay, erased or pruned): the conflict `rejected`.
   */
  replayOf?: string;
}

/** The request's context and the contexts its events brought themselves (WriteSet.contexts). */
export interface EventContexts {
  request: JsonObject;
  own: Map<string, JsonObject>;
}

/** A merge the store made while committing: `merged` became an alias of `into`. */
export interface MergeOutcome {
  merged: string;
  into: string;
}

export interface Committed {
  ok: true;
  /**
   * The profile as the write set left it (the survivor after a merge): always after a merge or with
   * `answerProfile`, otherwise null when the store did not need to read it.
   */
  profile: ProfileRecord | null;
  /** True when the write set created the profile or changed its stored record. */
  profileChanged: boolean;
  /** Merges made by `identify` operations, in order. */
  merges: MergeOutcome[];
  /** What the store decided about identities, for `debugging.logs`. */
  notes: string[];
  /**
   * The ids of the write set's events that were not stored because an event with the same client id
   * (`metadata.client_id`) is stored for their source, or comes earlier in the write set; every other
   * event of the write set was stored. Their profile operations were not applied either.
   */
  duplicates: string[];
}

/** `rejected`: the quarantined record of `replayOf` is gone; the others are worth resolving again. */
export type CommitConflict = 'session' | 'profile' | 'rejected';

export type CommitResult = Committed | { ok: false; conflict: CommitConflict };

/** One operation of a profile rule as it is saved (docs/api.md#profile-rules). */
export interface RuleOperation {
  op: RuleOpName;
  path?: string;
  from?: string;
  value?: unknown;
  /** The identity type of `identify`. */
  type?: string;
}

export type RuleOpName = (typeof RULE_OP_NAMES)[number];

/** A profile rule (docs/api.md#profile-rules): operations applied to the profile of matching events. */
export interface ProfileRule {
  id: string;
  name: string;
  enabled: boolean;
  event_type: string;
  /** Only events of this source, or of every source when null. */
  source_id: string | null;
  operations: RuleOperation[];
}

/** Metadata and validation schema of one event type (docs/api.md#event-type). */
export interface EventTypeRecord {
  event_type: string;
  name: string;
  description: string;
  tags: string[];
  validation: {
    enabled: boolean;
    /** Target expression (`event@properties`, …) → JSON Schema; key order is the check order. */
    json_schema: Record<string, unknown>;
  };
}

/** One failing target of one event (docs/api.md#validation-failures). */
export interface ValidationFailure {
  event: number;
  type: string;
  target: string;
  reason: string;
}

/** A request refused by validation, kept so that it can be inspected and replayed. */
export interface RejectedRecord {
  id: string;
  time: string;
  endpoint: 'track' | 'collect';
  source_id: string;
  session_id: string | null;
  /** The stored profile the request was resolved to (null for a new or no profile). */
  profile_id?: string | null;
  event_types: string[];
  detail: string;
  errors: ValidationFailure[];
  /** What the endpoint received: the body, and the query/path values that shaped it. */
  request: {
    body: unknown;
    profile_less?: boolean;
    event_type?: string;
    ip?: string | null;
    user_agent?: string | null;
  };
}
