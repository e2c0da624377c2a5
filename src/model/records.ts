/**
 * The stored records (docs/api.md#records) and the write set a request hands to the store: the
 * vocabulary shared by the pipeline (src/domain) and the store adapters (src/storage).
 */

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

export interface EventRecord {
  id: string;
  type: string;
  properties: JsonObject;
  context: JsonObject;
  source: Ref;
  session: Ref | null;
  profile: Ref | null;
  metadata: {
    time: { insert: string };
    ip: string | null;
    status: string;
    profile_less: boolean;
  };
}

export interface SessionRecord {
  id: string;
  profile: Ref | null;
  metadata: { time: { insert: string; update: string } };
  context: JsonObject;
  properties: JsonObject;
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
}

/** A stored session with the version the store uses for optimistic concurrency. */
export interface StoredSession {
  record: SessionRecord;
  version: number;
}

/**
 * Everything one request stores, committed atomically.
 * - `session.expectVersion`: null means "must not exist yet" (insert), a number means "update only if
 *   the stored version is still this one". A mismatch is a conflict: the request re-resolves.
 * - `touch`: the latest request of a session that is not rewritten (docs/api.md#session).
 * - `profile`: `create` inserts a new profile; `visit` records a new visit on a stored profile
 *   (applied by the store on the current stored record, so concurrent visits are counted exactly).
 */
export interface WriteSet {
  session?: { record: SessionRecord; expectVersion: number | null };
  /**
   * A stored session this request used without changing its record: its `metadata.time.update`
   * becomes `at` (unless later already). Never a conflict; a session gone meanwhile is left alone.
   */
  touch?: { id: string; at: string };
  profile?: { op: 'create'; record: ProfileRecord } | { op: 'visit'; id: string; at: string };
  events: EventRecord[];
}

export type CommitResult =
  { ok: true; profile: ProfileRecord | null } | { ok: false; conflict: 'session' | 'profile' };

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
  event_types: string[];
  detail: string;
  errors: ValidationFailure[];
  /** What the endpoint received: the body, and the query/path values that shaped it. */
  request: { body: unknown; profile_less?: boolean; event_type?: string; ip?: string | null };
}
