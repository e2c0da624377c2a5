/** JSON Schemas of responses and parameters shared by the routes; they also document /docs. */
import { anyObject, profileProperties, ref } from './records.js';

export const errorBody = {
  $id: 'Error',
  type: 'object',
  description: 'Every error: `detail` is a message or a list of {loc, msg, type}.',
  properties: {
    detail: {
      anyOf: [
        { type: 'string' },
        {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              loc: { type: 'array', items: { type: ['string', 'integer'] } },
              msg: { type: 'string' },
              type: { type: 'string' },
            },
          },
        },
      ],
    },
  },
  required: ['detail'],
  additionalProperties: true,
} as const;

const counted = {
  type: 'object',
  properties: {
    saved: { type: 'integer' },
    errors: { type: 'array' },
    ids: { type: 'array', items: { type: 'string' } },
    types: { type: 'array', items: { type: 'string' } },
  },
} as const;

export const trackResponse = {
  type: 'object',
  properties: {
    profile: {
      type: 'object',
      description: '`{id}`, or the whole profile (without traits.private) with options.profile',
      properties: profileProperties,
      additionalProperties: true,
    },
    session: ref,
    source: { type: 'object', properties: { consent: { type: 'boolean' } } },
    ux: { type: 'array' },
    response: anyObject,
    debugging: {
      type: 'object',
      description: 'Present with options.debugger (unless TRACK_DEBUG=no)',
      properties: {
        session: counted,
        events: {
          ...counted,
          properties: {
            ...counted.properties,
            duplicates: {
              type: 'array',
              items: { type: 'string' },
              description: 'client ids of events not stored again: an event with that id is stored',
            },
          },
        },
        profile: counted,
        execution: anyObject,
        segmentation: anyObject,
        logs: { type: 'array', items: anyObject },
      },
    },
  },
  required: ['session', 'source', 'ux', 'response'],
} as const;

export const collectResponse = {
  type: 'object',
  properties: {
    source: { type: 'object', properties: { consent: { type: 'boolean' } } },
    event: ref,
  },
} as const;

export const deletedOne = { type: 'object', properties: { deleted: { type: 'integer' } } } as const;

export function listOf(item: object) {
  return {
    type: 'object',
    properties: { total: { type: 'integer' }, result: { type: 'array', items: item } },
  };
}

export const idParam = {
  type: 'object',
  properties: { id: { type: 'string', maxLength: 255 } },
  required: ['id'],
} as const;

/** Error responses every route may give, referenced by status code. */
export function errorResponses(...codes: number[]): Record<number, unknown> {
  return Object.fromEntries(codes.map((code) => [code, { $ref: 'Error#' }]));
}
