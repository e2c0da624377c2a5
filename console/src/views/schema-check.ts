/**
 * Checks the text of a validation-schema record as it is typed, before the service sees it: JSON
 * syntax, the record's shape, and each target key (docs/api.md#targets). The service checks again on save
 * (it also compiles every JSON Schema) and its answer is shown too.
 */
import { eventType } from '../../../src/model/payloads.js';
import { draftOf } from '../../../src/domain/validation/drafts.js';
import { parseTarget } from '../../../src/domain/validation/targets.js';

export interface CheckResult {
  errors: string[];
  value?: Record<string, unknown>;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Where in the text a JSON.parse error points, when the message says. */
function position(message: string, text: string): string {
  const lineCol = /line (\d+) column (\d+)/.exec(message);
  if (lineCol) return '';
  const at = /position (\d+)/.exec(message);
  if (!at) return '';
  const offset = Number(at[1]);
  const before = text.slice(0, offset).split('\n');
  return ` (line ${before.length}, column ${(before[before.length - 1]?.length ?? 0) + 1})`;
}

export function targetProblem(key: string): string | null {
  const target = parseTarget(key);
  return typeof target === 'string' ? target : null;
}

export function checkSchemaRecord(text: string): CheckResult {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { errors: [`JSON: ${message}${position(message, text)}`] };
  }
  const errors: string[] = [];
  if (!isObject(value)) return { errors: ['the record must be a JSON object'] };
  const type = value.event_type;
  if (typeof type !== 'string' || type === '') errors.push('event_type: required, a non-empty string');
  else if (type.length > eventType.maxLength) {
    errors.push(`event_type: at most ${eventType.maxLength} characters`);
  }
  for (const key of ['name', 'description'] as const) {
    if (value[key] !== undefined && typeof value[key] !== 'string') errors.push(`${key}: must be a string`);
  }
  if (
    value.tags !== undefined &&
    !(Array.isArray(value.tags) && value.tags.every((t) => typeof t === 'string'))
  ) {
    errors.push('tags: must be a list of strings');
  }
  const validation = value.validation;
  if (validation !== undefined && validation !== null) {
    if (!isObject(validation)) errors.push('validation: must be an object');
    else {
      if (validation.enabled !== undefined && typeof validation.enabled !== 'boolean') {
        errors.push('validation.enabled: must be true or false');
      }
      const schemas = validation.json_schema;
      if (schemas !== undefined && !isObject(schemas))
        errors.push('validation.json_schema: must be an object');
      if (isObject(schemas)) {
        for (const [key, schema] of Object.entries(schemas)) {
          const problem = targetProblem(key);
          if (problem) errors.push(`validation.json_schema["${key}"]: ${problem}`);
          if (!isObject(schema) && typeof schema !== 'boolean') {
            errors.push(`validation.json_schema["${key}"]: a JSON Schema is an object (or a boolean)`);
          } else if (isObject(schema) && schema.$schema !== undefined) {
            if (draftOf(schema.$schema) === null) {
              errors.push(
                `validation.json_schema["${key}"].$schema: only draft 2020-12 and draft-07 are supported`,
              );
            }
          }
        }
      }
    }
  }
  return { errors, value };
}
