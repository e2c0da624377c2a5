import type { EventSource, JsonObject, ProfileRecord } from '../../model/records.js';
import type { Trace } from '../trace.js';
import type { Outcome } from './attempt.js';
import type { TrackOptions, TrackRequest } from './request.js';

interface Counted {
  saved: number;
  errors: string[];
  ids: string[];
  types: string[];
}

/** The answer of POST /track (docs/api.md#track-response). */
export interface TrackResponse {
  profile?: JsonObject;
  session: { id: string };
  source: { consent: boolean };
  ux: unknown[];
  response: JsonObject;
  debugging?: {
    session: Counted;
    /** `duplicates`: the client ids of the events not stored because they were stored before. */
    events: Counted & { duplicates: string[] };
    profile: Counted;
    execution: ReturnType<Trace['execution']>;
    segmentation: { errors: string[]; ids: string[] };
    logs: Trace['logs'];
  };
}

/**
 * The profile as a browser may see it (docs/security.md): everything but `traits.private`, the
 * identities and the ids of the profiles merged into it.
 */
function publicProfile(profile: ProfileRecord): JsonObject {
  const visible: JsonObject = { ...profile, traits: { public: profile.traits.public } };
  delete visible.ids;
  delete visible.merged;
  return visible;
}

function counted(saved: boolean, id: string | undefined): Counted {
  return { saved: saved ? 1 : 0, errors: [], ids: saved && id ? [id] : [], types: [] };
}

export function respond(
  request: TrackRequest,
  source: EventSource,
  options: TrackOptions,
  outcome: Outcome,
  trace: Trace,
): TrackResponse {
  const body: TrackResponse = {
    session: { id: outcome.identity.session.id },
    source: { consent: source.consent },
    ux: [],
    response: {},
  };
  if (!request.profileLess && outcome.profileId !== null) {
    const whole = options.profile && source.returns_profile ? outcome.profile : null;
    body.profile = whole ? publicProfile(whole) : { id: outcome.profileId };
  }
  if (trace.enabled) {
    body.debugging = {
      session: counted(outcome.sessionSaved, outcome.identity.session.id),
      events: {
        saved: outcome.events.length,
        errors: [],
        ids: outcome.events.map((e) => e.id),
        types: [...new Set(outcome.events.map((e) => e.type))],
        duplicates: outcome.duplicates.map((e) => e.metadata.client_id ?? ''),
      },
      profile: { saved: outcome.profilesSaved.length, errors: [], ids: outcome.profilesSaved, types: [] },
      execution: trace.execution(),
      segmentation: { errors: [], ids: [] },
      logs: trace.logs,
    };
  }
  return body;
}
