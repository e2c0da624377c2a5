/**
 * The rules step of /track (docs/api.md#profile-rules): the enabled rules of each event's type (and
 * source) give operations, resolved against the event; applied in order they predict the profile
 * the request leaves, which `profile@` validation targets see. The store applies the same
 * operations again on the profile as stored when the request commits.
 */
import { IDENTITY_BOUNDS, sameIdentity } from '../../model/identities.js';
import { applyOps, type ProfileOp } from '../../model/profile-ops.js';
import type { EventRecord, ProfileRecord, ProfileStep } from '../../model/records.js';
import type { Trace } from '../trace.js';
import type { RuleBook } from './book.js';
import type { CompiledRule } from './compile.js';
import { resolveOp } from './compile.js';

export interface RulesOutcome {
  /** The operations of each event that had any, in order. */
  steps: ProfileStep[];
  /**
   * The profile after the operations (identities and merges aside: the store decides those),
   * worked out when first asked: requests that need only the profile's id do not pay for it.
   * Null when the profile was not read (the store applies the operations to it at commit).
   */
  predict(): ProfileRecord | null;
  /** Rules applied, one per rule and event. */
  applied: number;
  /** Rules applied to events other than these (duplicates, whose operations the store skipped). */
  appliedExcept(eventIds: string[]): number;
}

const unchanged = (profile: ProfileRecord | null): RulesOutcome => ({
  steps: [],
  predict: () => profile,
  applied: 0,
  appliedExcept: () => 0,
});

/** The rules of an event type, from the cache when it holds them (no promise to wait for then). */
async function rulesOf(book: RuleBook, type: string): Promise<CompiledRule[] | null> {
  const rules = book.rulesFor(type);
  return rules instanceof Promise ? await rules : rules;
}

/** The enabled rules of each event type of a request (those with any). */
export type RulesByType = Map<string, CompiledRule[]>;

/** The rules of every type in the request, looked up once per type; null when none has any. */
export async function rulesByType(book: RuleBook, events: EventRecord[]): Promise<RulesByType | null> {
  if (events.length === 0) return null;
  let found: RulesByType | null = null;
  let looked: Set<string> | null = null;
  const first = events[0]!.type;
  for (const event of events) {
    const type = event.type;
    if (type === first ? looked !== null : looked?.has(type)) continue;
    (looked ??= new Set()).add(type);
    const rules = await rulesOf(book, type);
    if (rules) (found ??= new Map()).set(type, rules);
  }
  return found;
}

/** The request's profile as the rules step sees it: its id, and its record when it was read. */
export interface RulesSubject {
  /** Null for a profile-less request: no rule runs. */
  id: string | null;
  /**
   * The stored (or new) profile; null when only its id was taken. The operations need only the
   * events; the record is what `predict` applies them to.
   */
  record: ProfileRecord | null;
}

/** The operations the rules of `byType` (rulesByType) give the events, and the profile they predict. */
export function runRules(
  byType: RulesByType | null,
  events: EventRecord[],
  subject: RulesSubject,
  sourceId: string,
  at: string,
  trace: Trace,
): RulesOutcome {
  const profile = subject.record;
  if (subject.id === null || byType === null) return unchanged(profile);

  const steps: ProfileStep[] = [];
  const identities: Extract<ProfileOp, { op: 'identify' }>[] = [];
  let applied = 0;
  // Rules applied to each event, by index.
  const perEvent: number[] = [];
  for (let index = 0; index < events.length; index++) {
    const event = events[index]!;
    const rules = byType.get(event.type);
    if (!rules) continue;
    let ops: ProfileOp[] | null = null;
    const before = applied;
    for (const rule of rules) {
      if (rule.sourceId !== null && rule.sourceId !== sourceId) continue;
      applied++;
      if (trace.enabled) {
        const execution = trace.events[index];
        if (execution) (execution.rules ??= []).push({ id: rule.id, name: rule.name });
      }
      for (const compiled of rule.ops) {
        const op = resolveOp(compiled, event);
        if (!op) continue;
        if (op.op === 'identify') {
          if (identities.some((kept) => sameIdentity(kept, op))) continue;
          if (identities.length >= IDENTITY_BOUNDS.maxPerRequest) {
            trace.log(
              'warning',
              'rules',
              `identity ${op.type} ignored: at most ${IDENTITY_BOUNDS.maxPerRequest} per request`,
            );
            continue;
          }
          identities.push(op);
        }
        (ops ??= []).push(op);
      }
    }
    perEvent[index] = applied - before;
    if (ops) steps.push({ event: event.id, ops });
  }
  if (applied > 0 && trace.enabled) {
    const count = steps.reduce((n, s) => n + s.ops.length, 0);
    trace.log('info', 'rules', `${applied} rule application(s), ${count} operation(s)`);
  }
  let predicted: ProfileRecord | undefined;
  const predict = () =>
    profile &&
    (predicted ??= applyOps(
      profile,
      steps.flatMap((step) => step.ops),
      at,
    ).profile);
  const appliedExcept = (eventIds: string[]) => {
    if (eventIds.length === 0) return applied;
    const skipped = new Set(eventIds);
    return events.reduce(
      (n, event, index) => n - (skipped.has(event.id) ? (perEvent[index] ?? 0) : 0),
      applied,
    );
  };
  return { steps, predict, applied, appliedExcept };
}
