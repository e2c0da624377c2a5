import type { JsonObject } from '../model/records.js';
import type { TrackPayload } from '../model/payloads.js';
import { collect, type CollectDeps, type CollectResponse } from './collect.js';
import { NotFound, ProfileErased } from './errors.js';
import { track, type TrackDeps, type TrackResponse } from './track/track.js';

/**
 * Runs a refused request kept in the quarantine through its endpoint again (docs/api.md#replay),
 * with the sources, schemas and rules as they are now; once accepted it leaves the quarantine. A
 * request of a profile erased since is dropped, never replayed (ProfileErased).
 */
export async function replay(
  deps: Omit<TrackDeps & CollectDeps, 'quarantine'>,
  id: string,
): Promise<TrackResponse | CollectResponse> {
  const found = await deps.store.getRejected(id);
  if (!found) throw new NotFound('Rejected request', id);
  const { body, profile_less, event_type, ip = null } = found.request;
  const replayDeps = { ...deps, quarantine: undefined };
  let answer: TrackResponse | CollectResponse;
  try {
    answer =
      found.endpoint === 'track'
        ? await track(replayDeps, {
            payload: body as TrackPayload,
            profileLess: profile_less === true,
            ip,
            expectProfile: found.profile_id ?? null,
          })
        : await collect(replayDeps, {
            eventType: event_type ?? found.event_types[0] ?? '',
            sourceId: found.source_id,
            properties: body as JsonObject,
            ip,
          });
  } catch (error) {
    if (error instanceof ProfileErased) await deps.store.deleteRejected(found.id);
    throw error;
  }
  await deps.store.deleteRejected(found.id);
  return answer;
}
