import { admitSource, refuse } from '../admission.js';
import { Trace } from '../trace.js';
import { resolveAndCommit } from './attempt.js';
import { optionsOf, type TrackDeps, type TrackRequest } from './request.js';
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
      event_types: [...new Set(payload.events.map((e) => e.type))],
      request: { body: payload, profile_less: request.profileLess, ip: request.ip },
    });
  }
}

export type { TrackDeps, TrackRequest } from './request.js';
export type { TrackResponse } from './response.js';
