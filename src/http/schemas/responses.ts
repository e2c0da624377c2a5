/** JSON Schemas of responses and parameters shared by the routes; they also document /docs. */
import { fieldError, validationFailed } from './examples.js';
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

/** The error body, inline in each response so that it carries its own example. */
const errorShape = {
  type: errorBody.type,
  properties: errorBody.properties,
  required: errorBody.required,
  additionalProperties: errorBody.additionalProperties,
};

const retryAfterHeader = {
  'retry-after': { type: 'integer', description: 'seconds to wait before trying again' },
};

interface ErrorDoc {
  description: string;
  example: Record<string, unknown>;
  headers?: Record<string, unknown>;
}

/** What each error status means in general, with an example body (docs/api.md#errors). */
const ERRORS: Record<number, ErrorDoc> = {
  400: {
    description: 'The body is not JSON (or not UTF-8), or the URL is malformed',
    example: { detail: 'Request body is not valid JSON: Unexpected end of JSON input' },
  },
  401: { description: 'The management token is missing or wrong', example: { detail: 'Not authenticated' } },
  404: { description: 'No such record', example: { detail: 'Event source `demo` not found' } },
  406: {
    description: 'An event does not satisfy the validation schema of its type',
    example: validationFailed,
  },
  413: {
    description: 'The body is larger than TRACK_BODY_LIMIT, or has more events than TRACK_MAX_EVENTS',
    example: { detail: 'Request body is larger than 1048576 bytes' },
  },
  415: {
    description: 'The body is sent with a Content-Encoding other than gzip, deflate or identity',
    example: { detail: 'Content-Encoding `br` is not supported: use gzip, deflate or none' },
  },
  422: { description: 'The body, query or path breaks its shape', example: fieldError },
  429: {
    description: 'The event source sent more requests this second than its rate limit',
    example: { detail: 'Rate limit of 100 requests per second exceeded for source `demo`' },
    headers: retryAfterHeader,
  },
  503: {
    description:
      'The store is unavailable, the write queue is full, or the service is shutting down: retry later',
    example: { detail: 'Store unavailable, retry later' },
    headers: retryAfterHeader,
  },
};

/** An error status with what it means on a given route, instead of the general wording. */
export interface ErrorCase {
  status: number;
  description: string;
  example?: Record<string, unknown>;
}

/** The 401 of the tracking endpoints, whose check is the event source. */
export const sourceRefused: ErrorCase = {
  status: 401,
  description: 'The event source is unknown or disabled',
  example: { detail: 'Invalid event source `demo`' },
};

/** The 404 of a route reading one record. */
export function notFound(what: string, id: string): ErrorCase {
  return {
    status: 404,
    description: `No ${what.toLowerCase()} with this id`,
    example: { detail: `${what} \`${id}\` not found` },
  };
}

/**
 * The error responses of a route, named and with an example each, by status code (with the general
 * wording) or as cases of their own. Every route also answers 503 when the service shuts down.
 */
export function errorResponses(...items: (number | ErrorCase)[]): Record<number, unknown> {
  const cases = items.map((item) => (typeof item === 'number' ? { status: item } : item));
  if (!cases.some((c) => c.status === 503)) cases.push({ status: 503 });
  return Object.fromEntries(
    cases.map((c) => {
      const general = ERRORS[c.status]!;
      return [
        c.status,
        {
          ...errorShape,
          description: 'description' in c ? c.description : general.description,
          examples: [('example' in c && c.example) || general.example],
          ...(general.headers ? { headers: general.headers } : {}),
        },
      ];
    }),
  );
}

/** A success response holding a stored record (a schema of records.ts), named, with an example. */
export function recordResponse(ref: string, description: string, example: unknown): Record<string, unknown> {
  return { allOf: [{ $ref: ref }], description, examples: [example] };
}

/** Path parameters with an example value for each (what "Try it out" fills in). */
export function exampleId<P extends { properties: Record<string, object> }>(
  params: P,
  ...values: string[]
): P {
  const names = Object.keys(params.properties);
  return {
    ...params,
    properties: Object.fromEntries(
      names.map((name, i) => [
        name,
        values[i] === undefined
          ? params.properties[name]
          : { ...params.properties[name], examples: [values[i]] },
      ]),
    ),
  };
}
