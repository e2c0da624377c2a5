import type { Store } from '../storage/store.js';
import type { EventRecord, JsonObject } from '../model/records.js';
import { admitSource, refuse } from './admission.js';
import { commitWriteSet } from './commit.js';
import type { PipelineObserver } from './observer.js';
import type { Quarantine } from './quarantine.js';
import type { RateLimiter } from './rate-limit.js';
import type { SourceCache } from './sources.js';
import type { EventValidator } from './validation/validator.js';

export interface CollectRequest {
  eventType: string;
  sourceId: string;
  properties: JsonObject;
  ip: string | null;
}

export interface CollectDeps {
  store: Store;
  sources: SourceCache;
  validator: EventValidator;
  limiter: RateLimiter;
  observer: PipelineObserver;
  /** Where requests refused by validation are kept; absent when replaying from it. */
  quarantine?: Quarantine;
  clock: () => Date;
  newId: () => string;
}

export interface CollectResponse {
  source: { consent: boolean };
  event: { id: string };
}

/** POST /collect/{event_type}/{source_id} (docs/api.md#post-collect): one profile-less event, no session or profile. */
export async function collect(deps: CollectDeps, request: CollectRequest): Promise<CollectResponse> {
  const source = await admitSource(deps, request.sourceId, request.ip, 1);
  const event: EventRecord = {
    id: deps.newId(),
    type: request.eventType,
    properties: request.properties,
    context: {},
    source: { id: source.id },
    session: null,
    profile: null,
    metadata: {
      time: { insert: deps.clock().toISOString() },
      ip: request.ip,
      status: 'collected',
      profile_less: true,
    },
  };
  try {
    await deps.validator.check({ events: [event], session: null, profile: null });
  } catch (error) {
    await refuse(deps, error, 1, {
      endpoint: 'collect',
      source_id: source.id,
      session_id: null,
      event_types: [event.type],
      request: { body: request.properties, event_type: request.eventType, ip: request.ip },
    });
  }
  if (!source.transitional) await commitWriteSet(deps.store, deps.observer, { events: [event] });
  deps.observer.eventsAccepted(1);
  return { source: { consent: source.consent }, event: { id: event.id } };
}
