/**
 * The checks of a profile rule when it is saved (docs/api.md#profile-rules): every operation must
 * name what it needs and nothing else, write under the allowed roots, and carry a bounded value.
 * Returns the problems, each naming the operation and the field. No node-only imports: the console
 * runs the same checks while a rule is edited.
 */
import { IDENTITY_TYPE, normalizeIdentity } from '../../model/identities.js';
import { OPERATION_BOUNDS, parseProfilePath, PROTOTYPE_KEYS, valueSize } from '../../model/profile-ops.js';
import type { RuleOperation } from '../../model/records.js';
import type { FieldProblem } from '../errors.js';

/** Operations the enabled rules of one event type may hold together. */
export const MAX_OPERATIONS_PER_EVENT_TYPE = 1000;

const WITH_PATH = new Set(['set', 'set_once', 'unset', 'increment', 'append']);
/** Operations that need a value, literal or taken from the event. */
const NEEDS_VALUE = new Set(['set', 'set_once', 'append', 'add_segment', 'remove_segment', 'identify']);

/** The segments of a `from` path, or why it cannot be read. */
export function parseFromPath(from: string): string[] | string {
  const segments = from.split('.');
  if (segments.some((s) => s === '' || /\s/.test(s))) return 'path segments must be non-empty without spaces';
  if (segments.some((s) => PROTOTYPE_KEYS.has(s)))
    return 'path segments may not be __proto__, constructor or prototype';
  return segments;
}

function checkOne(op: RuleOperation, at: (string | number)[]): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const problem = (field: string, msg: string) =>
    problems.push({ field: [...at, field], msg: `${op.op}: ${msg}`, type: 'value_error.operation' });
  const has = (field: keyof RuleOperation) => Object.hasOwn(op, field) && op[field] !== undefined;

  if (WITH_PATH.has(op.op)) {
    if (!has('path')) problem('path', '`path` is required');
    else {
      const parsed = parseProfilePath(op.path!);
      if (typeof parsed === 'string') problem('path', `\`path\` ${parsed}`);
    }
  } else if (has('path')) {
    problem('path', '`path` is not taken (the operation names its own place)');
  }
  if (op.op === 'identify') {
    if (!has('type')) problem('type', '`type` is required (email, user_id, phone, or [a-z_]{1,32})');
    else if (!IDENTITY_TYPE.test(op.type!)) problem('type', '`type` must match [a-z_]{1,32}');
  } else if (has('type')) {
    problem('type', '`type` is taken by identify only');
  }

  const both = has('value') && has('from');
  if (both) problem('from', 'give `value` or `from`, not both');
  if (op.op === 'unset') {
    for (const field of ['value', 'from'] as const)
      if (has(field)) problem(field, `\`${field}\` is not taken`);
  } else if (NEEDS_VALUE.has(op.op) && !has('value') && !has('from')) {
    problem('value', '`value` or `from` is required');
  }
  if (has('from')) {
    const parsed = parseFromPath(op.from!);
    if (typeof parsed === 'string') problem('from', `\`from\` ${parsed}`);
  }
  if (has('value') && op.op !== 'unset') {
    const value = op.value;
    if (valueSize(value) > OPERATION_BOUNDS.maxValueBytes) {
      problem('value', `\`value\` is larger than ${OPERATION_BOUNDS.maxValueBytes} bytes as JSON`);
    } else if (op.op === 'increment' && typeof value !== 'number') {
      problem('value', '`value` must be a number');
    } else if (op.op === 'add_segment' || op.op === 'remove_segment') {
      if (
        typeof value !== 'string' ||
        value.trim() === '' ||
        value.length > OPERATION_BOUNDS.maxSegmentLength
      )
        problem(
          'value',
          `\`value\` must be a segment name of 1 to ${OPERATION_BOUNDS.maxSegmentLength} characters`,
        );
    } else if (op.op === 'identify' && has('type') && normalizeIdentity(op.type!, value) === null) {
      problem(
        'value',
        '`value` must be a string or number that names someone (not empty, null, anonymous, 0 or -1)',
      );
    }
  }
  return problems;
}

/** Every problem of a rule's operations, located at `["operations", <index>, <field>]`. */
export function checkOperations(operations: RuleOperation[]): FieldProblem[] {
  return operations.flatMap((op, i) => checkOne(op, ['operations', i]));
}
