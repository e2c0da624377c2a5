import type { Config } from './config.js';
import { DeliveryWorker } from './domain/delivery/worker.js';
import { Enricher } from './domain/enrichment/enricher.js';
import { KeyedLock } from './domain/keyed-lock.js';
import type { DeliveryLog } from './domain/observer.js';
import { timeOrderedId } from './domain/ids.js';
import { Quarantine } from './domain/quarantine.js';
import { RateLimiter } from './domain/rate-limit.js';
import { RuleBook } from './domain/rules/book.js';
import { SourceCache } from './domain/sources.js';
import { EventValidator } from './domain/validation/validator.js';
import { CursorCodec } from './http/paging.js';
import { Metrics } from './metrics.js';
import { HttpSender } from './outbound/http-sender.js';
import type { Sender } from './outbound/sender.js';
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
  /** Requests to destinations. */
  sender: Sender;
  /** Delivery to destinations, beside the HTTP server (started and stopped by src/app.ts). */
  deliveries: DeliveryWorker;
  clock: () => Date;
  newId: () => string;
}

export interface RouteOptions {
  services: Services;
}

/** The pipeline's parts over one opened store. */
export function buildServices(config: AppConfig, store: Store, log: DeliveryLog): Services {
  const clock = () => new Date();
  const newId = () => timeOrderedId();
  const observer = new Metrics(store);
  const sender = new HttpSender();
  const deliveries = new DeliveryWorker({
    store,
    sender,
    observer,
    log,
    clock,
    newId,
    settings: {
      timeoutMs: config.deliveryTimeoutMs,
      backoffMinMs: config.deliveryBackoffMinMs,
      backoffMaxMs: config.deliveryBackoffMaxMs,
      maxAgeMs: config.deliveryMaxAgeSec * 1000,
      leaseMs: config.deliveryLeaseSec * 1000,
      idleMs: 100,
      refreshMs: 5000,
    },
  });
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
    sender,
    deliveries,
    clock,
    newId,
  };
}
