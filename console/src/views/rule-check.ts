/**
 * Checks the text of a profile rule as it is typed, before the service sees it: JSON syntax, the
 * record's shape, and each operation with the service's own checks (src/domain/rules/check.ts:
 * paths under the allowed roots, values as each operation needs, their bounds). The service checks
 * again on save and its answer is shown too.
 */
import { eventType, profileRuleInput } from '../../../src/model/payloads.js';
import type { RuleOperation } from '../../../src/model/records.js';
import { checkOperations } from '../../../src/domain/rules/check.js';

export interface RuleCheck {
  errors: string[];
  value?: Record<string, unknown>;
}

const OPS = new Set<string>(profileRuleInput.properties.operations.items.properties.op.enum);
const MAX_OPERATIONS = profileRuleInput.properties.operations.maxItems;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function checkRuleRecord(text: string): RuleCheck {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { errors: [`JSON: ${error instanceof Error ? error.message : String(error)}`] };
  }
  if (!isObject(value)) return { errors: ['the rule must be a JSON object'] };
  const errors: string[] = [];
  const type = value.event_type;
  if (typeof type !== 'string' || type === '') errors.push('event_type: required, a non-empty string');
  else if (type.length > eventType.maxLength)
    errors.push(`event_type: at most ${eventType.maxLength} characters`);
  if (value.name !== undefined && typeof value.name !== 'string') errors.push('name: must be a string');
  if (value.enabled !== undefined && typeof value.enabled !== 'boolean')
    errors.push('enabled: must be true or false');
  if (value.source_id !== undefined && value.source_id !== null && typeof value.source_id !== 'string') {
    errors.push('source_id: a source id or null');
  }
  const operations = value.operations;
  if (!Array.isArray(operations) || operations.length === 0) {
    errors.push('operations: required, a list of at least one operation');
    return { errors, value };
  }
  if (operations.length > MAX_OPERATIONS) errors.push(`operations: at most ${MAX_OPERATIONS}`);
  const shaped: RuleOperation[] = [];
  operations.forEach((op, i) => {
    if (!isObject(op) || typeof op.op !== 'string' || !OPS.has(op.op)) {
      errors.push(`operations[${i}].op: one of ${[...OPS].join(', ')}`);
      return;
    }
    for (const field of ['path', 'from', 'type'] as const) {
      if (op[field] !== undefined && typeof op[field] !== 'string')
        errors.push(`operations[${i}].${field}: must be a string`);
    }
    shaped.push(op as unknown as RuleOperation);
  });
  if (shaped.length === operations.length) {
    for (const problem of checkOperations(shaped)) {
      errors.push(`operations[${problem.field[1]}].${problem.field[2]}: ${problem.msg}`);
    }
  }
  return { errors, value };
}
