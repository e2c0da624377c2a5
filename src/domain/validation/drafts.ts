/** The JSON Schema drafts a validation schema may declare by `$schema` (docs/api.md#schema-rules). */
export type Draft = '2020-12' | 'draft-07';

const DRAFTS: [RegExp, Draft][] = [
  [/^https?:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/, '2020-12'],
  [/^https?:\/\/json-schema\.org\/draft-07\/schema#?$/, 'draft-07'],
];

/** The draft a `$schema` value names (2020-12 when absent), or null for anything else. */
export function draftOf(declared: unknown): Draft | null {
  if (declared === undefined) return '2020-12';
  if (typeof declared !== 'string') return null;
  return DRAFTS.find(([pattern]) => pattern.test(declared))?.[1] ?? null;
}
