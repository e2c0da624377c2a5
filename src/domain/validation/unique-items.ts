import type { Ajv, FuncKeywordDefinition } from 'ajv';

/**
 * `uniqueItems` in linear time. Ajv's own keyword compares every pair of items that are not all of
 * one scalar type: a 469 KB array took 15 s. Here each item is written once in a canonical form
 * (object keys sorted, so that `{"a":1,"b":2}` equals `{"b":2,"a":1}` as JSON Schema says) and
 * looked up in a set: the cost grows with the size of the array, whatever its items.
 */
function canonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(record[key])}`).join(',')}}`;
}

type UniqueValidate = ((schema: boolean, data: unknown[]) => boolean) & {
  errors?: { keyword: string; message: string; params: Record<string, unknown> }[];
};

const validate: UniqueValidate = (unique, items) => {
  validate.errors = undefined;
  if (!unique || items.length < 2) return true;
  const seen = new Map<string, number>();
  for (let j = 0; j < items.length; j++) {
    const key = canonical(items[j]);
    const i = seen.get(key);
    if (i !== undefined) {
      validate.errors = [
        {
          keyword: 'uniqueItems',
          message: `must NOT have duplicate items (items ## ${j} and ${i} are identical)`,
          params: { i: j, j: i },
        },
      ];
      return false;
    }
    seen.set(key, j);
  }
  return true;
};

const definition: FuncKeywordDefinition = {
  keyword: 'uniqueItems',
  type: 'array',
  schemaType: 'boolean',
  errors: true,
  validate: validate as FuncKeywordDefinition['validate'],
};

/** Replaces Ajv's `uniqueItems` with the linear one. */
export function useLinearUniqueItems(ajv: Ajv): void {
  ajv.removeKeyword('uniqueItems');
  ajv.addKeyword(definition);
}
