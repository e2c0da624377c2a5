import type { Config } from './config.js';
import type { CursorCodec } from './domain/paging.js';
import type { KeyedLock } from './domain/keyed-lock.js';
import type { Quarantine } from './domain/quarantine.js';
import type { SourceRateLimiter } from './domain/rate-limit.js';
import type { EventValidator } from './domain/validation/validator.js';
import type { Metrics } from './metrics.js';
import type { SourceCache } from './domain/sources.js';
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
  quarantine: Quarantine;
  limiter: SourceRateLimiter;
  /** Metrics; also the pipeline's observer. */
  observer: Metrics;
  cursors: CursorCodec;
  clock: () => Date;
  newId: () => string;
}

export interface RouteOptions {
  services: Services;
}
