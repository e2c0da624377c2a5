import type { EventSource } from '../../model/records.js';
import { clockText } from '../../model/time.js';
import { admitSource, refuse } from '../admission.js';
import { claimOnly } from '../replay-claim.js';
import { transientIdentity } from '../identity.js';
import { Trace } from '../trace.js';
import { resolveAndCommit } from './attempt.js';
import { optionsOf, type TrackDeps, type TrackOptions, type TrackRequest } from './request.js';
import { respond, type TrackResponse } from './response.js';

/**
 * POST /track as plain data in, plain data out (docs/architecture.md): source check, then, one
 * request per session at a time, identity, event records, validation and commit, then the answer.
 * Throws the pipeline's errors (src/domain/errors.ts); never touches HTTP or SQL.
 */
export async function track(deps: TrackDeps, request: TrackRequest): Promise<TrackResponse> {
  const { payload } = request;
  const options = optionsOf(payload);
  const trace = new Trace(options.debugger && deps.debugAllowed);
  const eventCount = payload.events.length;
  const source = await admitSource(deps, payload.source.id, request.ip, eventCount);
  trace.log(
    'info',
    'source',
    `source ${source.id} accepted${source.transitional ? ' (transitional: nothing is stored)' : ''}`,
  );
  trace.step('source');
  if (deps.enricher.drops(request.userAgent)) {
    await claimOnly(deps, request.replayOf);
    return dropBot(deps, request, source, options, trace);
  }

  const run = () => resolveAndCommit(deps, request, source, options, trace);
  try {
    const outcome = source.transitional ? await run() : await deps.locks.run(payload.session.id, run);
    deps.observer.eventsAccepted(eventCount);
    return respond(request, source, options, outcome, trace);
  } catch (error) {
    return refuse(deps, error, eventCount, {
      endpoint: 'track',
      source_id: source.id,
      session_id: payload.session.id,
      profile_id: null,
      event_types: [...new Set(payload.events.map((e) => e.type))],
      request: {
        body: payload,
        profile_less: request.profileLess,
        ip: deps.enricher.storedAddress(request.ip),
        user_agent: request.userAgent,
      },
    });
  }
}

/**
 * A bot's request with TRACK_BOTS=drop: answered as usual (a first visit with a new profile id), but
 * nothing is read, validated or stored (docs/api.md#enrichment).
 */
function dropBot(
  deps: TrackDeps,
  request: TrackRequest,
  source: EventSource,
  options: TrackOptions,
  trace: Trace,
): TrackResponse {
  const { payload } = request;
  const identity = transientIdentity({
    sessionId: payload.session.id,
    profileId: undefined,
    profileLess: request.profileLess,
    context: payload.context ?? undefined,
    properties: payload.properties ?? undefined,
    now: clockText(deps.clock()),
    newId: deps.newId,
  });
  trace.log('info', 'enrichment', 'the User-Agent is a bot: nothing is stored (TRACK_BOTS=drop)');
  deps.observer.eventsAccepted(payload.events.length);
  deps.observer.eventsDropped(payload.events.length, 'bot');
  const outcome = {
    identity,
    profileId: identity.profileId,
    profile: identity.profile,
    sessionSaved: false,
    profilesSaved: [],
    events: [],
    duplicates: [],
  };
  return respond(request, source, options, outcome, trace);
}

export type { TrackDeps, TrackRequest } from './request.js';
export type { TrackResponse } from './response.js';
