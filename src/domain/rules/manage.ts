/**
 * Saving and deleting profile rules (docs/api.md#profile-rules): the record with its defaults, the
 * checks (a 422 naming the operation and field), the budget of operations per event type, and the
 * cache entries to forget.
 */
import type { ProfileRuleInput } from '../../model/payloads.js';
import type { ProfileRule, RuleOperation } from '../../model/records.js';
import type { Store } from '../../storage/store.js';
import { InvalidRecord } from '../errors.js';
import type { RuleBook } from './book.js';
import { checkOperations, MAX_OPERATIONS_PER_EVENT_TYPE } from './check.js';

export function ruleFromInput(input: ProfileRuleInput, newId: () => string): ProfileRule {
  return {
    id: input.id ?? newId(),
    name: input.name ?? '',
    enabled: input.enabled ?? true,
    event_type: input.event_type,
    source_id: input.source_id ?? null,
    operations: input.operations.map((op) => {
      const kept: RuleOperation = { op: op.op };
      for (const field of ['type', 'path', 'from'] as const)
        if (op[field] !== undefined) kept[field] = op[field];
      if (Object.hasOwn(op, 'value') && op.value !== undefined) kept.value = op.value;
      return kept;
    }),
  };
}

/** Checks and stores a rule (replacing one with its id); the stored record. */
export async function saveRule(
  deps: { store: Store; rules: RuleBook; newId: () => string },
  input: ProfileRuleInput,
): Promise<ProfileRule> {
  const rule = ruleFromInput(input, deps.newId);
  const problems = checkOperations(rule.operations);
  if (problems.length > 0) throw new InvalidRecord(problems);
  const siblings = await deps.store.listProfileRules({ eventType: rule.event_type });
  if (rule.enabled) {
    const total = siblings
      .filter((other) => other.enabled && other.id !== rule.id)
      .reduce((sum, other) => sum + other.operations.length, rule.operations.length);
    if (total > MAX_OPERATIONS_PER_EVENT_TYPE) {
      throw new InvalidRecord([
        {
          field: ['operations'],
          msg: `the enabled rules of event type ${rule.event_type} would hold ${total} operations, at most ${MAX_OPERATIONS_PER_EVENT_TYPE}`,
          type: 'value_error.operations.budget',
        },
      ]);
    }
  }
  const previous = await deps.store.putProfileRule(rule);
  deps.rules.invalidate(rule.event_type);
  if (previous && previous !== rule.event_type) deps.rules.invalidate(previous);
  return rule;
}

/** Deletes a rule; false when there is none with this id. */
export async function deleteRule(deps: { store: Store; rules: RuleBook }, id: string): Promise<boolean> {
  const eventType = await deps.store.deleteProfileRule(id);
  if (eventType === null) return false;
  deps.rules.invalidate(eventType);
  return true;
}
