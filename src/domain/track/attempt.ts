import type { EventRecord, EventSource, ProfileRecord, WriteSet } from '../../model/records.js';
import { commitWriteSet } from '../commit.js';
import { Conflict } from '../errors.js';
import type { Identity, IdentityInput } from '../identity.js';
import { resolveIdentity, transientIdentity } from '../identity.js';
import type { Trace } from '../trace.js';
import { buildEvents } from './events.js';
import type { TrackDeps, TrackOptions, TrackRequest } from './request.js';

/** What a request ended with: the identity it resolved and what it stored. */
export interface Outcome {
  identity: Identity;
  profile: ProfileRecord | null;
  sessionSaved: boolean;
  profileSaved: boolean;
  events: EventRecord[];
}

/**
 * A conflict means another process changed the session or profile between our read and our commit:
 * resolve again after a short random pause, so that processes contending for one session take turns
 * instead of one of them losing every time.
 */
const MAX_ATTEMPTS = 30;
const backoff = (attempt: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(100, 2 ** attempt)));

/**
 * The pipeline of one request after its source was admitted: identity, event records, validation,
 * write set, commit. A commit that conflicts starts again from the identity.
 */
export async function resolveAndCommit(
  deps: TrackDeps,
  request: TrackRequest,
  source: EventSource,
  options: TrackOptions,
  trace: Trace,
): Promise<Outcome> {
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const outcome = await attemptOnce(deps, request, source, options, trace, attempt);
    if (outcome !== 'conflict') return outcome;
    trace.events.length = 0;
    await backoff(attempt);
  }
  throw new Conflict('the session or profile');
}

function identityInput(deps: TrackDeps, request: TrackRequest, now: string): IdentityInput {
  const { payload } = request;
  return {
    sessionId: payload.session.id,
    profileId: payload.profile?.id || undefined,
    profileLess: request.profileLess,
    context: payload.context ?? undefined,
    properties: payload.properties ?? undefined,
    now,
    newId: deps.newId,
  };
}

async function attemptOnce(
  deps: TrackDeps,
  request: TrackRequest,
  source: EventSource,
  options: TrackOptions,
  trace: Trace,
  attempt: number,
): Promise<Outcome | 'conflict'> {
  const now = deps.clock().toISOString();
  const input = identityInput(deps, request, now);
  const identity = source.transitional
    ? transientIdentity(input)
    : await resolveIdentity(deps.store, input, trace);
  trace.step('identity');

  const saveEvents = options.saveEvents && !source.transitional;
  const events = buildEvents(request, identity, now, saveEvents, deps.newId, trace);
  trace.step('events');

  const checked = await deps.validator.check({
    events: events.records,
    session: identity.session,
    profile: identity.profile,
  });
  for (const e of trace.events) if (checked.has(e.type)) e.validation = 'passed';
  trace.log(
    'info',
    'validation',
    checked.size > 0 ? `validated: ${[...checked].join(', ')}` : 'no schema applies',
  );
  trace.step('validation');

  const writeSet: WriteSet = {
    session: options.saveSession ? identity.sessionWrite : undefined,
    touch: options.saveSession ? identity.sessionTouch : undefined,
    profile: identity.profileWrite,
    events: events.saved,
  };
  const nothing = !writeSet.session && !writeSet.touch && !writeSet.profile && writeSet.events.length === 0;
  if (source.transitional || nothing) {
    trace.log('info', 'store', 'nothing to store');
    return { identity, profile: identity.profile, sessionSaved: false, profileSaved: false, events: [] };
  }
  const result = await commitWriteSet(deps.store, deps.observer, writeSet);
  trace.step('commit');
  if (!result.ok) {
    trace.log(
      'warning',
      'identity',
      `${result.conflict} changed concurrently; resolving again (attempt ${attempt})`,
    );
    return 'conflict';
  }
  const savedIds = new Set(events.saved.map((e) => e.id));
  for (const e of trace.events) e.saved = savedIds.has(e.id);
  trace.log(
    'info',
    'store',
    `committed: ${writeSet.session ? 1 : 0} session, ${writeSet.profile ? 1 : 0} profile, ${events.saved.length} events`,
  );
  return {
    identity,
    profile: result.profile ?? identity.profile,
    sessionSaved: writeSet.session !== undefined,
    profileSaved: writeSet.profile !== undefined,
    events: events.saved,
  };
}
