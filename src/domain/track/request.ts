import type { TrackPayload } from '../../model/payloads.js';
import type { Store } from '../../storage/store.js';
import type { Enricher } from '../enrichment/enricher.js';
import type { KeyedLock } from '../keyed-lock.js';
import type { PipelineObserver } from '../observer.js';
import type { Quarantine } from '../quarantine.js';
import type { RateLimiter } from '../rate-limit.js';
import type { RuleBook } from '../rules/book.js';
import type { SourceCache } from '../sources.js';
import type { EventValidator } from '../validation/validator.js';

/** One POST /track: the validated payload and what the HTTP layer knows of the request. */
export interface TrackRequest {
  payload: TrackPayload;
  profileLess: boolean;
  /** The client's address (docs/api.md#client-address), before any anonymisation. */
  ip: string | null;
  userAgent: string | null;
  /** When the request was first received, for a replay from the quarantine; else now. */
  receivedAt?: Date;
  /**
   * A replay of a refused request that was resolved to this stored profile: when the profile no
   * longer exists and the replay would create a new one, it is refused (ProfileErased).
   */
  expectProfile?: string | null;
  /** A replay: the id of the quarantined record, claimed by the commit (src/domain/replay-claim.ts). */
  replayOf?: string;
}

/** What the tracking pipeline works with, built once per app. */
export interface TrackDeps {
  store: Store;
  sources: SourceCache;
  locks: KeyedLock;
  validator: EventValidator;
  rules: RuleBook;
  limiter: RateLimiter;
  observer: PipelineObserver;
  enricher: Enricher;
  /** Seconds a device clock may be off before its event times are corrected (TRACK_CLOCK_SKEW). */
  clockSkewSec: number;
  /** Where requests refused by validation are kept; absent when replaying from it. */
  quarantine?: Quarantine;
  /** False when the service is configured to ignore `options.debugger`. */
  debugAllowed: boolean;
  clock: () => Date;
  newId: () => string;
}

/** Tracker options with their defaults (docs/api.md#track-options). */
export interface TrackOptions {
  debugger: boolean;
  profile: boolean;
  saveSession: boolean;
  saveEvents: boolean;
}

export function optionsOf(payload: TrackPayload): TrackOptions {
  const o = payload.options ?? {};
  return {
    debugger: o.debugger ?? false,
    profile: o.profile ?? false,
    saveSession: o.saveSession ?? true,
    saveEvents: o.saveEvents ?? true,
  };
}
