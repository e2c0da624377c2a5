/**
 * A profile rule as the pipeline runs it: paths split once, and each operation resolved against an
 * event into the ProfileOp the store applies (docs/api.md#operations).
 */
import { normalizeIdentity } from '../../model/identities.js';
import { OPERATION_BOUNDS, valueSize, type ProfileOp } from '../../model/profile-ops.js';
import type { EventRecord, ProfileRule, RuleOpName } from '../../model/records.js';
import { resolvePath } from '../validation/targets.js';

export interface CompiledOp {
  op: RuleOpName;
  path: string[];
  /** Where the value is in the event; null for a literal `value`. */
  from: string[] | null;
  value: unknown;
  type: string;
}

export interface CompiledRule {
  id: string;
  name: string;
  sourceId: string | null;
  ops: CompiledOp[];
}

/** A saved (so already checked) rule, ready to run. */
export function compileRule(rule: ProfileRule): CompiledRule {
  return {
    id: rule.id,
    name: rule.name,
    sourceId: rule.source_id,
    ops: rule.operations.map((op) => ({
      op: op.op,
      path: op.path?.split('.') ?? [],
      from: op.from === undefined ? null : op.from.split('.'),
      value: op.value,
      type: op.type ?? '',
    })),
  };
}

/** The operation with its value for this event; null when it does nothing for it (docs/api.md#operations). */
export function resolveOp(op: CompiledOp, event: EventRecord): ProfileOp | null {
  let value = op.value;
  if (op.from) {
    const found = resolvePath(event, op.from);
    if (!found.found) return null;
    value = found.value;
  }
  switch (op.op) {
    case 'unset':
      return { op: 'unset', path: op.path };
    case 'increment': {
      const by = value === undefined ? 1 : value;
      return typeof by === 'number' && Number.isFinite(by)
        ? { op: 'increment', path: op.path, value: by }
        : null;
    }
    case 'add_segment':
    case 'remove_segment': {
      if (typeof value !== 'string') return null;
      const name = value.trim();
      return name && name.length <= OPERATION_BOUNDS.maxSegmentLength ? { op: op.op, value: name } : null;
    }
    case 'identify': {
      const normalized = normalizeIdentity(op.type, value);
      return normalized === null ? null : { op: 'identify', type: op.type, value: normalized };
    }
    default:
      return valueSize(value) > OPERATION_BOUNDS.maxValueBytes ? null : { op: op.op, path: op.path, value };
  }
}
