import type { Store } from '../storage/store.js';
import type { EventRecord, JsonObject } from './records.js';
import type { SourceCache } from './sources.js';

export interface CollectRequest {
  eventType: string;
  sourceId: string;
  properties: JsonObject;
  ip: string | null;
}

export interface CollectDeps {
  store: Store;
  sources: SourceCache;
  clock: () => Date;
  newId: () => string;
}

export interface CollectResponse {
  source: { consent: boolean };
  event: { id: string };
}

/** POST /collect/{event_type}/{source_id} (contract §4): one profile-less event, no session or profile. */
export async function collect(deps: CollectDeps, request: CollectRequest): Promise<CollectResponse> {
  const source = await deps.sources.require(request.sourceId);
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
  if (!source.transitional) await deps.store.commit({ events: [event] });
  return { source: { consent: source.consent }, event: { id: event.id } };
}
