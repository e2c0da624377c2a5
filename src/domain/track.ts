import { performance } from 'node:perf_hooks';
import { errors } from '../errors.js';
import type { Store } from '../storage/store.js';
import type { Identity, IdentityInput } from './identity.js';
import { resolveIdentity, transientIdentity } from './identity.js';
import type { KeyedLock } from './keyed-lock.js';
import { deepMerge } from './merge.js';
import type { EventRecord, EventSource, JsonObject, ProfileRecord, WriteSet } from './records.js';
import { admitSource, refuse } from './admission.js';
import { commitWriteSet } from './commit.js';
import type { PipelineObserver } from './observer.js';
import type { Quarantine } from './quarantine.js';
import type { SourceRateLimiter } from './rate-limit.js';
import type { SourceCache } from './sources.js';
import { Trace } from './trace.js';
import type { EventValidator } from './validation/validator.js';

export interface EventInput {
  type: string;
  properties?: JsonObject | null;
  context?: JsonObject | null;
  options?: { save?: boolean } | null;
}

/** The tracker payload after schema validation (contract §3.1). */
export interface TrackPayload {
  source: { id: string };
  session: { id: string };
  profile?: { id?: string | null } | null;
  context?: JsonObject | null;
  properties?: JsonObject | null;
  events: EventInput[];
  options?: { debugger?: boolean; profile?: boolean; saveSession?: boolean; saveEvents?: boolean } | null;
}

export interface TrackRequest {
  payload: TrackPayload;
  profileLess: boolean;
  ip: string | null;
}

export interface TrackDeps {
  store: Store;
  sources: SourceCache;
  locks: KeyedLock;
  validator: EventValidator;
  limiter: SourceRateLimiter;
  observer: PipelineObserver;
  /** Where requests refused by validation are kept; absent when replaying from it. */
  quarantine?: Quarantine;
  /** False when the service is configured to ignore `options.debugger`. */
  debugAllowed: boolean;
  clock: () => Date;
  newId: () => string;
}

interface Counted {
  saved: number;
  errors: string[];
  ids: string[];
  types: string[];
}

export interface TrackResponse {
  profile?: JsonObject;
  session: { id: string };
  source: { consent: boolean };
  ux: unknown[];
  response: JsonObject;
  debugging?: {
    session: Counted;
    events: Counted;
    profile: Counted;
    execution: ReturnType<Trace['execution']>;
    segmentation: { errors: string[]; ids: string[] };
    logs: Trace['logs'];
  };
}

/**
 * A conflict means another process changed the session or profile between our read and our commit:
 * resolve again after a short random pause, so that processes contending for one session take turns
 * instead of one of them losing every time.
 */
const MAX_ATTEMPTS = 30;
const backoff = (attempt: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(100, 2 ** attempt)));

/** Tracker options with the defaults of contract §3.2. */
function optionsOf(payload: TrackPayload) {
  const o = payload.options ?? {};
  return {
    debugger: o.debugger ?? false,
    profile: o.profile ?? false,
    saveSession: o.saveSession ?? true,
    saveEvents: o.saveEvents ?? true,
  };
}

/** The stored event records of a request and which of them are saved. */
function buildEvents(
  request: TrackRequest,
  identity: Identity,
  now: string,
  saveEvents: boolean,
  newId: () => string,
  trace: Trace,
): { records: EventRecord[]; saved: EventRecord[] } {
  const { payload, profileLess } = request;
  const topContext = payload.context ?? {};
  const records: EventRecord[] = [];
  const saved: EventRecord[] = [];
  for (const input of payload.events) {
    const started = trace.enabled ? performance.now() : 0;
    const record: EventRecord = {
      id: newId(),
      type: input.type,
      properties: input.properties ?? {},
      context: input.context ? deepMerge(topContext, input.context).value : topContext,
      source: { id: payload.source.id },
      session: { id: identity.session.id },
      profile: identity.profile ? { id: identity.profile.id } : null,
      metadata: { time: { insert: now }, ip: request.ip, status: 'collected', profile_less: profileLess },
    };
    records.push(record);
    const skipped = !saveEvents
      ? 'options.saveEvents is false'
      : input.options?.save === false
        ? 'options.save is false'
        : undefined;
    if (!skipped) saved.push(record);
    if (trace.enabled) {
      trace.event(
        { id: record.id, type: record.type, saved: false, skipped, validation: 'no schema' },
        started,
      );
    }
  }
  return { records, saved };
}

function publicProfile(profile: ProfileRecord): JsonObject {
  return { ...profile, traits: { public: profile.traits.public } };
}

/**
 * POST /track as plain data in, plain data out: source check, identity, event records, commit,
 * response. Throws catalogue errors (401, 503); never touches HTTP or SQL.
 */
export async function track(deps: TrackDeps, request: TrackRequest): Promise<TrackResponse> {
  const { payload } = request;
  const options = optionsOf(payload);
  const trace = new Trace(options.debugger && deps.debugAllowed);
  const eventCount = payload.events.length;
  const source = await admitSource(deps, payload.source.id, eventCount);
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

interface Outcome {
  identity: Identity;
  profile: ProfileRecord | null;
  sessionSaved: boolean;
  profileSaved: boolean;
  events: EventRecord[];
}

async function resolveAndCommit(
  deps: TrackDeps,
  request: TrackRequest,
  source: EventSource,
  options: ReturnType<typeof optionsOf>,
  trace: Trace,
): Promise<Outcome> {
  const { payload } = request;
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const now = deps.clock().toISOString();
    const input: IdentityInput = {
      sessionId: payload.session.id,
      profileId: payload.profile?.id || undefined,
      profileLess: request.profileLess,
      context: payload.context ?? undefined,
      properties: payload.properties ?? undefined,
      now,
      newId: deps.newId,
    };
    const identity = source.transitional
      ? transientIdentity(input)
      : await resolveIdentity(deps.store, input, trace);
    trace.step('identity');

    const events = buildEvents(
      request,
      identity,
      now,
      options.saveEvents && !source.transitional,
      deps.newId,
      trace,
    );
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
      profile: identity.profileWrite,
      events: events.saved,
    };
    if (source.transitional || (!writeSet.session && !writeSet.profile && writeSet.events.length === 0)) {
      trace.log('info', 'store', 'nothing to store');
      return { identity, profile: identity.profile, sessionSaved: false, profileSaved: false, events: [] };
    }
    const result = await commitWriteSet(deps.store, deps.observer, writeSet);
    trace.step('commit');
    if (result.ok) {
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
    trace.log(
      'warning',
      'identity',
      `${result.conflict} changed concurrently; resolving again (attempt ${attempt})`,
    );
    trace.events.length = 0;
    await backoff(attempt);
  }
  throw errors.storeUnavailable();
}

function counted(saved: boolean, id: string | undefined): Counted {
  return { saved: saved ? 1 : 0, errors: [], ids: saved && id ? [id] : [], types: [] };
}

function respond(
  request: TrackRequest,
  source: EventSource,
  options: ReturnType<typeof optionsOf>,
  outcome: Outcome,
  trace: Trace,
): TrackResponse {
  const body: TrackResponse = {
    session: { id: outcome.identity.session.id },
    source: { consent: source.consent },
    ux: [],
    response: {},
  };
  if (!request.profileLess && outcome.profile) {
    body.profile =
      options.profile && source.returns_profile ? publicProfile(outcome.profile) : { id: outcome.profile.id };
  }
  if (trace.enabled) {
    body.debugging = {
      session: counted(outcome.sessionSaved, outcome.identity.session.id),
      events: {
        saved: outcome.events.length,
        errors: [],
        ids: outcome.events.map((e) => e.id),
        types: [...new Set(outcome.events.map((e) => e.type))],
      },
      profile: counted(outcome.profileSaved, outcome.profile?.id),
      execution: trace.execution(),
      segmentation: { errors: [], ids: [] },
      logs: trace.logs,
    };
  }
  return body;
}
