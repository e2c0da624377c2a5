import type { EventRecord, EventSource, ProfileRecord } from '../../model/records.js';
import { clockText } from '../../model/time.js';
import { commitWriteSet } from '../commit.js';
import { claimed, claimOnly } from '../replay-claim.js';
import { Conflict, ProfileErased, ValidationFailed } from '../errors.js';
import { RequestClock } from '../event-time.js';
import { rulesByType, runRules } from '../rules/run.js';
import type { Identity, IdentityInput } from '../identity.js';
import { resolveIdentity, transientIdentity } from '../identity.js';
import type { Trace } from '../trace.js';
import { buildEvents } from './events.js';
import type { TrackDeps, TrackOptions, TrackRequest } from './request.js';
import { buildWriteSet } from './write-set.js';

/** What a request ended with: the identity it resolved and what it stored. */
export interface Outcome {
  identity: Identity;
  /** The id of the profile the request ends with (null for profile-less requests). */
  profileId: string | null;
  /** That profile, when the request read or made it (always with options.profile answered). */
  profile: ProfileRecord | null;
  sessionSaved: boolean;
  /** Profiles the request created or changed: those merged away, then the one it ends with. */
  profilesSaved: string[];
  /** The events stored. */
  events: EventRecord[];
  /**
   * Events not stored because an event with the same client id is stored for their source (or came
   * earlier in the request): they run no later step.
   */
  duplicates: EventRecord[];
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

function identityInput(deps: TrackDeps, request: TrackRequest, now: string, attempt: number): IdentityInput {
  const { payload } = request;
  return {
    // A first attempt takes a known session's profile by its id, and reads it only when a step
    // needs it (see attemptOnce); an attempt after a conflict reads it, in case it is gone.
    readBoundProfile: attempt > 1,
    sessionId: payload.session.id,
    profileId: payload.profile?.id || undefined,
    profileLess: request.profileLess,
    context: payload.context ?? undefined,
    properties: payload.properties ?? undefined,
    now,
    newId: deps.newId,
  };
}

/** A session this request creates gets what its User-Agent and address say: once per session. */
function enrichNewSession(
  deps: TrackDeps,
  request: TrackRequest,
  identity: Identity,
  saveSession: boolean,
  trace: Trace,
): Identity {
  const write = identity.sessionWrite;
  if (!saveSession || !write || write.expectVersion !== null) return identity;
  const fields = deps.enricher.session(request.userAgent, request.ip);
  if (!fields) return identity;
  const session = { ...identity.session, ...fields };
  if (trace.enabled) {
    const { device, os, app } = fields;
    trace.log(
      'info',
      'enrichment',
      `session ${session.id}: ${device.type}, ${os.name ?? 'unknown system'}, ${app.name ?? 'unknown app'}, country ${device.geo.country.code ?? 'unknown'}`,
    );
    trace.step('enrichment');
  }
  return { ...identity, session, sessionWrite: { ...write, record: session } };
}

async function attemptOnce(
  deps: TrackDeps,
  request: TrackRequest,
  source: EventSource,
  options: TrackOptions,
  trace: Trace,
  attempt: number,
): Promise<Outcome | 'conflict'> {
  const received = deps.clock();
  const now = clockText(received);
  const input = identityInput(deps, request, now, attempt);
  const resolved = source.transitional
    ? transientIdentity(input)
    : await resolveIdentity(deps.store, input, trace);
  const expected = request.expectProfile;
  if (expected && resolved.profileWrite?.op === 'create' && !(await deps.store.getProfile(expected))) {
    throw new ProfileErased(expected);
  }
  trace.step('identity');
  const identity = enrichNewSession(deps, request, resolved, options.saveSession, trace);

  const saveEvents = options.saveEvents && !source.transitional;
  const clock = RequestClock.at(request.receivedAt ?? received, request.payload.sent_at, deps.clockSkewSec);
  const ip = deps.enricher.storedAddress(request.ip);
  const events = buildEvents(request, identity, { now, clock, ip, saveEvents, newId: deps.newId }, trace);
  trace.step('events');

  // event@ and session@ targets first, then the profile rules, then profile@ targets on the
  // profile as the rules leave it (docs/api.md#applying-schemas).
  const validation = await deps.validator.start(events.records);
  validation.check({ session: identity.session, profile: identity.profile }, (o) => o !== 'profile');
  trace.step('validation');
  // The whole profile is answered only with options.profile; otherwise its id is enough.
  const wholeProfile = options.profile && source.returns_profile;
  const byType = identity.profileId !== null ? await rulesByType(deps.rules, events.records) : null;
  const profileTargets = validation.targets('profile');
  // A request that stores no event has no profile write to check at commit that its profile exists.
  // Rules alone do not need it: their operations come from the events, and the store applies them
  // to the profile as stored when the request commits (a conflict there if it is gone).
  const needProfile = wholeProfile || profileTargets || events.saved.length === 0;
  let profile = identity.profile;
  if (!profile && identity.profileId !== null && needProfile) {
    profile = await deps.store.getProfile(identity.profileId);
    if (profile?.id !== identity.profileId) {
      // Erased or merged since the session was bound to it: resolve again, reading it first.
      trace.log(
        'warning',
        'identity',
        `profile ${identity.profileId} of the session changed; resolving again`,
      );
      return 'conflict';
    }
  }
  const rules = runRules(
    byType,
    events.records,
    { id: identity.profileId, record: profile },
    source.id,
    now,
    trace,
  );
  if (profileTargets) {
    validation.check({ session: identity.session, profile: rules.predict() }, (o) => o === 'profile');
  }
  let checked: Set<string>;
  try {
    checked = validation.finish();
  } catch (error) {
    // Kept with the refused request, so that erasing the profile erases it too.
    if (error instanceof ValidationFailed && identity.profileWrite?.op !== 'create') {
      error.profileId = identity.profileId;
    }
    throw error;
  }
  for (const e of trace.events) if (checked.has(e.type)) e.validation = 'passed';
  trace.log(
    'info',
    'validation',
    checked.size > 0 ? `validated: ${[...checked].join(', ')}` : 'no schema applies',
  );
  trace.step('rules');

  const writeSet = buildWriteSet(identity, rules, options, events.saved, events.contexts, now, wholeProfile);
  const { replayOf } = request;
  if (replayOf !== undefined) writeSet.replayOf = replayOf;
  const profileNow = () => (wholeProfile ? rules.predict() : profile);
  const nothing = !writeSet.session && !writeSet.touch && !writeSet.profile && writeSet.events.length === 0;
  if (source.transitional || nothing) {
    await claimOnly(deps, replayOf);
    trace.log('info', 'store', 'nothing to store');
    return {
      identity,
      profileId: identity.profileId,
      profile: profileNow(),
      sessionSaved: false,
      profilesSaved: [],
      events: [],
      duplicates: [],
    };
  }
  const result = claimed(await commitWriteSet(deps.store, deps.observer, writeSet), replayOf);
  trace.step('commit');
  if (!result.ok) {
    trace.log(
      'warning',
      'identity',
      `${result.conflict} changed concurrently; resolving again (attempt ${attempt})`,
    );
    return 'conflict';
  }
  const { stored, duplicates } = splitDuplicates(events.saved, result.duplicates);
  if (duplicates.length > 0) deps.observer.eventsDuplicate(source.id, duplicates.length);
  if (trace.enabled) {
    const storedIds = new Set(stored.map((e) => e.id));
    const duplicateIds = new Set(result.duplicates);
    for (const e of trace.events) {
      e.saved = storedIds.has(e.id);
      // A duplicate runs no rule: the store did not apply its operations.
      if (duplicateIds.has(e.id)) {
        e.skipped = 'duplicate';
        delete e.rules;
      }
    }
  }
  const answered = result.profile ?? profileNow();
  const profileId = result.profile?.id ?? identity.profileId;
  const profilesSaved = result.merges.map((m) => m.merged);
  if (result.profileChanged && profileId !== null) profilesSaved.push(profileId);
  if (trace.enabled) trace.merges.push(...result.merges);
  for (const note of result.notes) trace.log('info', 'identity', note);
  deps.observer.rulesApplied(rules.appliedExcept(result.duplicates));
  deps.observer.profilesMerged(result.merges.length);
  trace.log(
    'info',
    'store',
    `committed: ${writeSet.session ? 1 : 0} session, ${profilesSaved.length} profile, ${stored.length} events` +
      (duplicates.length > 0 ? `; ${duplicates.length} duplicates not stored again` : ''),
  );
  return {
    identity,
    profileId,
    profile: answered,
    sessionSaved: writeSet.session !== undefined,
    profilesSaved,
    events: stored,
    duplicates,
  };
}

/** The events a commit stored, and those it reported as duplicates. */
function splitDuplicates(
  events: EventRecord[],
  duplicateIds: string[],
): { stored: EventRecord[]; duplicates: EventRecord[] } {
  if (duplicateIds.length === 0) return { stored: events, duplicates: [] };
  const ids = new Set(duplicateIds);
  return { stored: events.filter((e) => !ids.has(e.id)), duplicates: events.filter((e) => ids.has(e.id)) };
}
