import type {
  EventContexts,
  EventRecord,
  ProfileChange,
  ProfileWrite,
  WriteSet,
} from '../../model/records.js';
import type { Identity } from '../identity.js';
import type { RulesOutcome } from '../rules/run.js';
import type { TrackOptions } from './request.js';

/** The change with only its `identify` operations (a new profile has the others applied already). */
function identitiesOnly(change: ProfileChange): ProfileChange | undefined {
  const steps = change.steps
    .map((step) => ({ event: step.event, ops: step.ops.filter((op) => op.op === 'identify') }))
    .filter((step) => step.ops.length > 0);
  return steps.length > 0 ? { at: change.at, steps } : undefined;
}

/**
 * What the request's profile needs from the store (src/model/records.ts: ProfileWrite): a new
 * profile as the rules left it, a visit, the rules' operations, or, for events naming a stored
 * profile, that it still exists when they commit. The store skips the operations of events that
 * prove duplicates.
 */
function profileWrite(
  identity: Identity,
  rules: RulesOutcome,
  saved: EventRecord[],
  now: string,
): ProfileWrite | undefined {
  const profileId = identity.profileId;
  if (profileId === null) return undefined;
  const change = rules.steps.length > 0 ? { at: now, steps: rules.steps } : undefined;
  const write = identity.profileWrite;
  if (write?.op === 'create') {
    // With client event ids some events may prove duplicates: the store then needs every operation,
    // to make the new profile again without theirs.
    const keyed = saved.some((e) => typeof e.metadata.client_id === 'string');
    const sent = change && (keyed ? change : identitiesOnly(change));
    return { op: 'create', record: rules.predict() ?? write.record, change: sent };
  }
  if (write?.op === 'visit') return { ...write, change };
  // A known session: its profile as read, unchanged by identity.
  if (change || saved.length > 0) return { op: 'keep', id: profileId, change };
  return undefined;
}

/** Everything the request stores, committed in one transaction (docs/architecture.md#the-write-path). */
export function buildWriteSet(
  identity: Identity,
  rules: RulesOutcome,
  options: TrackOptions,
  saved: EventRecord[],
  contexts: EventContexts,
  now: string,
  answerProfile: boolean,
): WriteSet {
  const writeSet: WriteSet = {
    session: options.saveSession ? identity.sessionWrite : undefined,
    touch: options.saveSession ? identity.sessionTouch : undefined,
    profile: profileWrite(identity, rules, saved, now),
    events: saved,
  };
  if (saved.length > 1) writeSet.contexts = contexts;
  if (answerProfile) writeSet.answerProfile = true;
  return writeSet;
}
