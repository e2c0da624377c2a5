import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { RE2JS } from 're2js';
import { InvalidRecord, type FieldProblem } from '../errors.js';
import type { EventTypeRecord } from '../../model/records.js';
import { draftOf } from './drafts.js';
import { parseTarget, type Target } from './targets.js';
import { useLinearUniqueItems } from './unique-items.js';

// ajv-formats is CommonJS: its function is the default export's default under ESM interop.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv,
) => Ajv;

export interface CompiledTarget extends Target {
  validate: ValidateFunction;
}

export interface CompiledEventType {
  record: EventTypeRecord;
  targets: CompiledTarget[];
}

/**
 * `pattern` and `patternProperties` run on RE2 (linear time), so no schema can stall the collector
 * with a catastrophic regular expression. Patterns RE2 cannot express (lookaround, backreferences)
 * are refused when the schema is saved.
 */
const linearRegExp = Object.assign(
  (pattern: string) => {
    const compiled = RE2JS.compile(pattern);
    // Ajv keys compiled patterns by their string form: it must name the pattern.
    return { test: (text: string) => compiled.test(text), toString: () => `re2:${pattern}` };
  },
  { code: 'linearRegExp' },
);
const AJV_OPTIONS: Options = {
  allErrors: false,
  strict: false,
  validateFormats: true,
  // Only the event's own data counts: `constructor` or `toString` are not inherited answers.
  ownProperties: true,
  code: { regExp: linearRegExp },
};

/** A $ref or $dynamicRef that leaves the schema (anything not starting with '#'), if any. */
function findRemoteRef(schema: unknown): string | null {
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const node = stack.pop();
    if (Array.isArray(node)) stack.push(...node);
    else if (node !== null && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        if (
          (key === '$ref' || key === '$dynamicRef') &&
          typeof value === 'string' &&
          !value.startsWith('#')
        ) {
          return value;
        }
        stack.push(value);
      }
    }
  }
  return null;
}

function newAjv(schema: unknown): Ajv | string {
  const declared =
    schema !== null && typeof schema === 'object' ? (schema as { $schema?: unknown }).$schema : undefined;
  const draft = draftOf(declared);
  if (draft === null) return `unsupported $schema ${JSON.stringify(declared)}: use draft 2020-12 or draft-07`;
  const ajv = draft === '2020-12' ? new Ajv2020(AJV_OPTIONS) : new Ajv(AJV_OPTIONS);
  addFormats(ajv);
  useLinearUniqueItems(ajv);
  return ajv;
}

/**
 * Compiles every target of a record once. Malformed keys, invalid schemas, unsupported drafts and
 * references outside the schema are 422s naming the key (docs/api.md#targets); nothing is ever fetched.
 */
export function compileEventType(record: EventTypeRecord): CompiledEventType {
  const problems: FieldProblem[] = [];
  const targets: CompiledTarget[] = [];
  for (const [key, schema] of Object.entries(record.validation.json_schema)) {
    const field = ['validation', 'json_schema', key];
    const target = parseTarget(key);
    if (typeof target === 'string') {
      problems.push({ field, msg: `invalid target \`${key}\`: ${target}`, type: 'value_error.target' });
      continue;
    }
    if (
      typeof schema !== 'boolean' &&
      (schema === null || typeof schema !== 'object' || Array.isArray(schema))
    ) {
      problems.push({
        field,
        msg: `schema of \`${key}\` must be a JSON Schema object`,
        type: 'value_error.schema',
      });
      continue;
    }
    const remote = findRemoteRef(schema);
    if (remote !== null) {
      problems.push({
        field,
        msg: `schema of \`${key}\` references \`${remote}\` outside itself; remote references are not fetched`,
        type: 'value_error.schema.remote_ref',
      });
      continue;
    }
    const ajv = newAjv(schema);
    if (typeof ajv === 'string') {
      problems.push({ field, msg: `schema of \`${key}\`: ${ajv}`, type: 'value_error.schema' });
      continue;
    }
    try {
      // The draft is chosen by the Ajv class; `$schema` itself is dropped so http/https spellings agree.
      const body = typeof schema === 'boolean' ? schema : { ...(schema as Record<string, unknown>) };
      if (typeof body === 'object') delete body.$schema;
      targets.push({ ...target, validate: ajv.compile(body) });
    } catch (error) {
      const reason = (error as Error).message.split('\n')[0];
      problems.push({ field, msg: `schema of \`${key}\` is invalid: ${reason}`, type: 'value_error.schema' });
    }
  }
  if (problems.length > 0) throw new InvalidRecord(problems);
  return { record, targets };
}

/** One-line reason of docs/api.md#validation-failures for the first Ajv error. */
export function reasonOf(error: ErrorObject | undefined): string {
  if (!error) return 'is invalid';
  if (error.keyword === 'required') return `'${String(error.params.missingProperty)}' is a required property`;
  const message = (error.message ?? 'is invalid').replace(/\s+/g, ' ');
  return error.instancePath ? `${error.instancePath} ${message}` : message;
}
