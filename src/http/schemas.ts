/**
 * JSON Schemas of request and response bodies: they validate input (422 with the field path),
 * serialize responses, and document every route in /docs.
 */

const anyObject = { type: 'object', additionalProperties: true } as const;
const nullableObject = { type: ['object', 'null'], additionalProperties: true } as const;
const ref = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } as const;
const nullableRef = { type: ['object', 'null'], properties: { id: { type: 'string' } } } as const;
const time = { type: 'string', format: 'date-time' } as const;
const nullableTime = { type: ['string', 'null'], format: 'date-time' } as const;
export const idString = { type: 'string', minLength: 1, maxLength: 128 } as const;
export const eventType = { type: 'string', minLength: 1, maxLength: 255 } as const;

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

export const eventSource = {
  $id: 'EventSource',
  type: 'object',
  properties: {
    id: { type: 'string' },
    type: { type: 'string' },
    name: { type: 'string' },
    description: { type: 'string' },
    enabled: { type: 'boolean' },
    transitional: { type: 'boolean' },
    consent: { type: 'boolean' },
    returns_profile: { type: 'boolean' },
    tags: { type: 'array', items: { type: 'string' } },
    rate_limit: {
      type: 'integer',
      description: 'requests per second (per process); absent: TRACK_RATE_LIMIT',
    },
  },
  required: [
    'id',
    'type',
    'name',
    'description',
    'enabled',
    'transitional',
    'consent',
    'returns_profile',
    'tags',
  ],
} as const;

export const eventSourceInput = {
  type: 'object',
  description: 'An event source; absent fields take their defaults, a missing id is generated.',
  properties: {
    id: idString,
    type: { type: 'string', minLength: 1, maxLength: 64 },
    name: { type: 'string', maxLength: 255 },
    description: { type: 'string', maxLength: 4096 },
    enabled: { type: 'boolean' },
    transitional: { type: 'boolean' },
    consent: { type: 'boolean' },
    returns_profile: { type: 'boolean' },
    tags: { type: 'array', maxItems: 100, items: { type: 'string', maxLength: 255 } },
    rate_limit: {
      type: ['integer', 'null'],
      minimum: 1,
      description: 'requests per second this source may send (per process); null: TRACK_RATE_LIMIT',
    },
  },
} as const;

export const eventRecord = {
  $id: 'Event',
  type: 'object',
  properties: {
    id: { type: 'string' },
    type: { type: 'string' },
    properties: anyObject,
    context: anyObject,
    source: ref,
    session: nullableRef,
    profile: nullableRef,
    metadata: {
      type: 'object',
      properties: {
        time: { type: 'object', properties: { insert: time } },
        ip: { type: ['string', 'null'] },
        status: { type: 'string' },
        profile_less: { type: 'boolean' },
      },
    },
  },
} as const;

export const sessionRecord = {
  $id: 'Session',
  type: 'object',
  properties: {
    id: { type: 'string' },
    profile: nullableRef,
    metadata: {
      type: 'object',
      properties: { time: { type: 'object', properties: { insert: time, update: time } } },
    },
    context: anyObject,
    properties: anyObject,
  },
} as const;

const profileProperties = {
  id: { type: 'string' },
  metadata: {
    type: 'object',
    properties: {
      time: {
        type: 'object',
        properties: {
          insert: time,
          update: time,
          visit: {
            type: 'object',
            properties: { last: nullableTime, current: nullableTime, count: { type: 'integer' } },
          },
        },
      },
    },
  },
  stats: { type: 'object', properties: { visits: { type: 'integer' } }, additionalProperties: true },
  traits: anyObject,
  consents: anyObject,
  segments: { type: 'array' },
  interests: anyObject,
} as const;

export const profileRecord = { $id: 'Profile', type: 'object', properties: profileProperties } as const;

const optionFlags = {
  debugger: { type: 'boolean' },
  profile: { type: 'boolean' },
  saveSession: { type: 'boolean' },
  saveEvents: { type: 'boolean' },
} as const;

export const trackPayload = {
  type: 'object',
  description:
    'The tracker payload. Unknown fields are accepted and ignored; `null` optional objects count as absent.',
  required: ['source', 'session', 'events'],
  properties: {
    source: { type: 'object', required: ['id'], properties: { id: idString } },
    session: { type: 'object', required: ['id'], properties: { id: idString } },
    profile: { type: ['object', 'null'], properties: { id: { type: ['string', 'null'], maxLength: 128 } } },
    context: nullableObject,
    properties: nullableObject,
    options: { type: ['object', 'null'], properties: optionFlags },
    events: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['type'],
        properties: {
          type: eventType,
          properties: nullableObject,
          context: nullableObject,
          options: { type: ['object', 'null'], properties: { save: { type: 'boolean' } } },
        },
      },
    },
  },
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
        events: counted,
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

const jsonSchemaMap = {
  type: 'object',
  description: 'Target expression (`event@properties`, `session@context.page`, `profile@...`) → JSON Schema',
  additionalProperties: { description: 'a JSON Schema (object or boolean)' },
} as const;

export const eventTypeRecord = {
  $id: 'EventType',
  type: 'object',
  properties: {
    event_type: { type: 'string' },
    name: { type: 'string' },
    description: { type: 'string' },
    tags: { type: 'array', items: { type: 'string' } },
    validation: {
      type: 'object',
      properties: {
        enabled: { type: 'boolean' },
        json_schema: { type: 'object', additionalProperties: true },
      },
    },
  },
} as const;

export const eventTypeInput = {
  type: 'object',
  required: ['event_type'],
  properties: {
    event_type: eventType,
    name: { type: 'string', maxLength: 255 },
    description: { type: 'string', maxLength: 4096 },
    tags: { type: 'array', maxItems: 100, items: { type: 'string', maxLength: 255 } },
    validation: {
      type: ['object', 'null'],
      properties: { enabled: { type: 'boolean' }, json_schema: jsonSchemaMap },
    },
  },
} as const;

export const validationFailure = {
  type: 'object',
  properties: {
    event: { type: 'integer' },
    type: { type: 'string' },
    target: { type: 'string' },
    reason: { type: 'string' },
  },
} as const;

export const rejectedRecord = {
  $id: 'Rejected',
  type: 'object',
  properties: {
    id: { type: 'string' },
    time: { type: 'string', format: 'date-time' },
    endpoint: { type: 'string', enum: ['track', 'collect'] },
    source_id: { type: 'string' },
    session_id: { type: ['string', 'null'] },
    event_types: { type: 'array', items: { type: 'string' } },
    detail: { type: 'string' },
    errors: { type: 'array', items: validationFailure },
    request: {
      type: 'object',
      description: 'what the endpoint received: the body, and the query/path values that shaped it',
      properties: {
        body: {},
        profile_less: { type: 'boolean' },
        event_type: { type: 'string' },
        ip: { type: ['string', 'null'] },
      },
    },
  },
} as const;
