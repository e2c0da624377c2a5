import type { Store } from '../storage/store.js';
import type { EventRecord, JsonObject } from '../model/records.js';
import { clockText } from '../model/time.js';
import { admitSource, refuse } from './admission.js';
import { commitWriteSet } from './commit.js';
import { claimed, claimOnly } from './replay-claim.js';
import type { Enricher } from './enrichment/enricher.js';
import type { PipelineObserver } from './observer.js';
import type { Quarantine } from './quarantine.js';
import type { RateLimiter } from './rate-limit.js';
import type { SourceCache } from './sources.js';
import type { EventValidator } from './validation/validator.js';

export interface CollectRequest {
  eventType: string;
  sourceId: string;
  properties: JsonObject;
  /** The client's address, before any anonymisation. */
  ip: string | null;
  userAgent: string | null;
  /** When the request was first received, for a replay from the quarantine; else now. */
  receivedAt?: Date;
  /** A replay: the id of the quarantined record, claimed by the commit (src/domain/replay-claim.ts). */
  replayOf?: string;
}

export interface CollectDeps {
  store: Store;
  sources: SourceCache;
  validator: EventValidator;
  limiter: RateLimiter;
  observer: PipelineObserver;
  enricher: Enricher;
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
  const now = deps.clock();
  const insert = clockText(now);
  const ip = deps.enricher.storedAddress(request.ip);
  const event: EventRecord = {
    id: deps.newId(),
    type: request.eventType,
    properties: request.properties,
    context: {},
    source: { id: source.id },
    session: null,
    profile: null,
    metadata: {
      // No timestamp: the event happened when the request was (first) received.
      time: { insert, create: request.receivedAt?.toISOString() ?? insert, source: 'server' },
      client_id: null,
      ip,
      status: 'collected',
      profile_less: true,
    },
  };
  if (deps.enricher.drops(request.userAgent)) {
    await claimOnly(deps, request.replayOf);
    deps.observer.eventsAccepted(1);
    deps.observer.eventsDropped(1, 'bot');
    return { source: { consent: source.consent }, event: { id: event.id } };
  }
  try {
    await deps.validator.check({ events: [event], session: null, profile: null });
  } catch (error) {
    await refuse(deps, error, 1, {
      endpoint: 'collect',
      source_id: source.id,
      session_id: null,
      profile_id: null,
      event_types: [event.type],
      request: {
        body: request.properties,
        event_type: request.eventType,
        ip,
        user_agent: request.userAgent,
      },
    });
  }
  const { replayOf } = request;
  if (source.transitional) await claimOnly(deps, replayOf);
  else claimed(await commitWriteSet(deps.store, deps.observer, { events: [event], replayOf }), replayOf);
  deps.observer.eventsAccepted(1);
  return { source: { consent: source.consent }, event: { id: event.id } };
}
