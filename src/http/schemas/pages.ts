/** The parts every cursor-paged listing shares (docs/api.md#paging). */

/** The `limit` and `cursor` query parameters. */
export const pageParams = {
  limit: { type: 'integer', minimum: 1, maximum: 1000, default: 50 },
  cursor: { type: 'string', maxLength: 1024, description: 'the `next` of the previous page' },
} as const;

/** A page of records of the schema `ref` and the cursor of the following page (null after the last). */
export function pageOf<Ref extends string>(ref: Ref) {
  return {
    type: 'object',
    properties: {
      result: { type: 'array', items: { $ref: ref } },
      next: { type: ['string', 'null'] },
    },
  } as const;
}
