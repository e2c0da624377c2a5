import type { Config } from './config.js';
import { Enricher } from './domain/enrichment/enricher.js';
import { KeyedLock } from './domain/keyed-lock.js';
import { timeOrderedId } from './domain/ids.js';
import { Quarantine } from './domain/quarantine.js';
import { RateLimiter } from './domain/rate-limit.js';
import { RuleBook } from './domain/rules/book.js';
import { SourceCache } from './domain/sources.js';
import { EventValidator } from './domain/validation/validator.js';
import { CursorCodec } from './http/paging.js';
import { Metrics } from './metrics.js';
import type { Store } from './storage/store.js';

/** Configuration with the API token resolved (src/token.ts), as the app needs it. */
export type AppConfig = Config & { apiToken: string };

/** What route plugins need, built once per app in src/app.ts. */
export interface Services {
  config: AppConfig;
  store: Store;
  sources: SourceCache;
  locks: KeyedLock;
  validator: EventValidator;
  /** Profile rules by event type, cached for EVENT_VALIDATOR_TTL like the schemas. */
  rules: RuleBook;
  quarantine: Quarantine;
  limiter: RateLimiter;
  enricher: Enricher;
  /** Seconds a device clock may be off before its event times are corrected. */
  clockSkewSec: number;
  /** Metrics; also the pipeline's observer. */
  observer: Metrics;
  cursors: CursorCodec;
  clock: () => Date;
  newId: () => string;
}

export interface RouteOptions {
  services: Services;
}

/** The pipeline's parts over one opened store. */
export function buildServices(config: AppConfig, store: Store): Services {
  const clock = () => new Date();
  const newId = () => timeOrderedId();
  const observer = new Metrics(store);
  return {
    config,
    store,
    sources: new SourceCache(store, config.sourceTtlSec),
    locks: new KeyedLock(),
    validator: new EventValidator(store, config.validatorTtlSec),
    rules: new RuleBook(store, config.validatorTtlSec),
    quarantine: new Quarantine(
      store,
      {
        maxAgeDays: config.rejectedMaxAgeDays,
        maxCount: config.rejectedMaxCount,
        maxBytes: config.rejectedMaxBytes,
        perSourcePerSecond: config.rejectedRateLimit,
      },
      observer,
      clock,
      newId,
    ),
    limiter: new RateLimiter({ perSource: config.rateLimit, perClient: config.clientRateLimit }),
    enricher: new Enricher({ enrich: config.enrich, bots: config.bots, anonymize: config.ipAnonymize }),
    clockSkewSec: config.clockSkewSec,
    observer,
    cursors: new CursorCodec(config.apiToken),
    clock,
    newId,
  };
}
