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

/**
 * What a commit did. `duplicates` are the ids of the write set's events that were not stored because
 * an event with the same client id (`metadata.client_id`) is stored for their source, or comes
 * earlier in the write set; every other event of the write set was stored.
 */
export type CommitResult =
  | { ok: true; profile: ProfileRecord | null; duplicates: string[] }
  | { ok: false; conflict: 'session' | 'profile' };

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
  request: {
    body: unknown;
    profile_less?: boolean;
    event_type?: string;
    ip?: string | null;
    user_agent?: string | null;
  };
}
