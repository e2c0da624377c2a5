import type { Store } from '../storage/store.js';
import { deepMerge } from '../model/merge.js';
import type { JsonObject, ProfileRecord, SessionRecord, StoredSession, WriteSet } from '../model/records.js';
import { applyVisit, newProfile } from '../model/profiles.js';
import type { Trace } from './trace.js';

export interface IdentityInput {
  sessionId: string;
  /** The profile id the client sent, if any. */
  profileId: string | undefined;
  profileLess: boolean;
  context: JsonObject | undefined;
  properties: JsonObject | undefined;
  now: string;
  newId: () => string;
  /**
   * Read the stored profile a known session is bound to. Without it, the profile is taken to exist
   * and only its id is used: the commit checks that it still does (a conflict otherwise, and the
   * request resolves again with this set).
   */
  readBoundProfile?: boolean;
}

export interface Identity {
  session: SessionRecord;
  /** What to write for the session; undefined when it is unchanged. */
  sessionWrite: WriteSet['session'];
  /** A stored session left unchanged: only the time of its latest request is written. */
  sessionTouch: WriteSet['touch'];
  /** The id of the request's profile (null for profile-less requests). */
  profileId: string | null;
  /**
   * The profile as it will be after this request: null for profile-less requests, and when only
   * the id of a known session's profile was taken (IdentityInput.readBoundProfile).
   */
  profile: ProfileRecord | null;
  profileWrite: WriteSet['profile'];
}

function newSession(id: string, now: string): SessionRecord {
  return { id, profile: null, metadata: { time: { insert: now, update: now } }, context: {}, properties: {} };
}

/**
 * Resolves the session and profile of a /track request (docs/api.md#profile-and-session, #profile-less-requests) from what is stored.
 * Only reads; the returned write set parts carry the expectations the store checks at commit.
 */
export async function resolveIdentity(store: Store, input: IdentityInput, trace: Trace): Promise<Identity> {
  const stored = await store.getSession(input.sessionId);
  let session = stored?.record ?? newSession(input.sessionId, input.now);
  let changed = stored === null;
  trace.log(
    'info',
    'identity',
    stored ? `session ${input.sessionId} loaded` : `session ${input.sessionId} is new`,
  );

  let profile: ProfileRecord | null = null;
  let profileWrite: WriteSet['profile'];
  const boundId = stored ? stored.record.profile?.id : input.profileId;
  if (!input.profileLess && stored && boundId && input.readBoundProfile === false) {
    // A known session's profile: its id is all the request needs unless rules, profile@ targets or
    // options.profile ask for more (src/domain/track/attempt.ts loads it then).
    trace.log('info', 'identity', `profile ${boundId} bound to the session is used`);
    return mergeRequest(session, changed, stored, input, boundId, null, undefined);
  }
  if (!input.profileLess) {
    const existing = boundId ? await store.getProfile(boundId) : null;
    if (stored && existing) {
      profile = existing;
      trace.log('info', 'identity', `profile ${existing.id} bound to the session is used`);
    } else if (existing) {
      profile = applyVisit(existing, input.now);
      profileWrite = { op: 'visit', id: existing.id, at: input.now };
      trace.log('info', 'identity', `profile ${existing.id} found: new visit ${profile.stats.visits}`);
    } else {
      profile = newProfile(input.newId(), input.now);
      profileWrite = { op: 'create', record: profile };
      const why = stored
        ? boundId
          ? `profile ${boundId} of the session no longer exists`
          : 'the session has no profile'
        : boundId
          ? `profile ${boundId} is unknown`
          : 'no profile id was sent';
      trace.log('info', 'identity', `${why}: new profile ${profile.id} created`);
    }
    if (session.profile?.id !== profile.id) {
      session = { ...session, profile: { id: profile.id } };
      changed = true;
    }
  }

  return mergeRequest(session, changed, stored, input, profile?.id ?? null, profile, profileWrite);
}

/** The request's context and properties merged into the session: what the session write is. */
function mergeRequest(
  base: SessionRecord,
  changedBefore: boolean,
  stored: StoredSession | null,
  input: IdentityInput,
  profileId: string | null,
  profile: ProfileRecord | null,
  profileWrite: WriteSet['profile'],
): Identity {
  let session = base;
  let changed = changedBefore;
  const context = deepMerge(session.context, input.context);
  const properties = deepMerge(session.properties, input.properties);
  if (context.changed || properties.changed) {
    session = { ...session, context: context.value, properties: properties.value };
    changed = true;
  }
  if (changed && stored) {
    session = { ...session, metadata: { time: { ...session.metadata.time, update: input.now } } };
  }
  const sessionWrite = changed ? { record: session, expectVersion: stored?.version ?? null } : undefined;
  const sessionTouch = changed ? undefined : { id: session.id, at: input.now };
  return { session, sessionWrite, sessionTouch, profileId, profile, profileWrite };
}

/** Identity for a transitional source: nothing is read or stored, every request is a first visit. */
export function transientIdentity(input: IdentityInput): Identity {
  const profile = input.profileLess ? null : newProfile(input.newId(), input.now);
  const base = newSession(input.sessionId, input.now);
  const session: SessionRecord = {
    ...base,
    profile: profile ? { id: profile.id } : null,
    context: deepMerge({}, input.context).value,
    properties: deepMerge({}, input.properties).value,
  };
  return {
    session,
    sessionWrite: undefined,
    sessionTouch: undefined,
    profileId: profile?.id ?? null,
    profile,
    profileWrite: undefined,
  };
}
