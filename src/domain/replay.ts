import type { JsonObject, RejectedRecord } from '../model/records.js';
import type { TrackPayload } from '../model/payloads.js';
import { collect, type CollectResponse } from './collect.js';
import { ProfileErased, ValidationFailed } from './errors.js';
import type { Quarantine } from './quarantine.js';
import { track, type TrackDeps, type TrackResponse } from './track/track.js';

export interface ReplayDeps extends TrackDeps {
  quarantine: Quarantine;
}

/**
 * Runs a quarantined request through its endpoint's pipeline again (docs/api.md#replay). Accepted,
 * the record leaves the quarantine in the commit that stores its events (src/domain/replay-claim.ts),
 * so that of concurrent replays one stores them and the others find the record gone (NotFound);
 * refused by validation again, the record keeps its place with the current failures; any other
 * refusal leaves it as it was. A request of a profile erased since it was refused is dropped, never
 * replayed (ProfileErased).
 */
export async function replay(
  deps: ReplayDeps,
  record: RejectedRecord,
): Promise<TrackResponse | CollectResponse> {
  // The pipelines run without the quarantine, so that a refusal is not kept a second time.
  const run = { ...deps, quarantine: undefined };
  const { body, profile_less, event_type, ip = null, user_agent: userAgent = null } = record.request;
  // Event times are taken against when the request was first received (docs/api.md#event-time).
  const receivedAt = new Date(record.time);
  let answer: TrackResponse | CollectResponse;
  try {
    answer =
      record.endpoint === 'track'
        ? await track(run, {
            payload: body as TrackPayload,
            profileLess: profile_less === true,
            ip,
            userAgent,
            receivedAt,
            expectProfile: record.profile_id ?? null,
            replayOf: record.id,
          })
        : await collect(run, {
            eventType: event_type ?? record.event_types[0] ?? '',
            sourceId: record.source_id,
            properties: body as JsonObject,
            ip,
            userAgent,
            receivedAt,
            replayOf: record.id,
          });
  } catch (error) {
    if (error instanceof ValidationFailed) await deps.quarantine.refusedAgain(record, error);
    if (error instanceof ProfileErased) await deps.store.deleteRejected(record.id);
    throw error;
  }
  return answer;
}
