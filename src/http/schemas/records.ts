/**
 * JSON Schemas of the stored records as the API returns them (docs/api.md#records). One file for all
 * the records, since they share their parts; its length is the records' fields, one per line.
 */

export const anyObject = { type: 'object', additionalProperties: true } as const;

export const ref = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } as const;

const nullableRef = { type: ['object', 'null'], properties: { id: { type: 'string' } } } as const;

const time = { type: 'string', format: 'date-time' } as const;

const nullableTime = { type: ['string', 'null'], format: 'date-time' } as const;

const nullableString = { type: ['string', 'null'] } as const;

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
        time: {
          type: 'object',
          properties: {
            insert: { ...time, description: 'when the service received the event' },
            create: { ...time, description: "when the event happened, by the server's clock" },
            source: {
              type: 'string',
              enum: ['server', 'device', 'corrected', 'clamped'],
              description: 'where `create` comes from',
            },
          },
        },
        client_id: { type: ['string', 'null'], description: 'the id the client gave the event' },
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
    device: {
      type: 'object',
      description: "what the session's first request said; absent when enrichment is off",
      properties: {
        type: { type: 'string', enum: ['desktop', 'mobile', 'tablet', 'bot', 'other'] },
        geo: {
          type: 'object',
          properties: {
            country: {
              type: 'object',
              properties: { code: { type: ['string', 'null'], description: 'ISO 3166-1 alpha-2' } },
            },
          },
        },
      },
    },
    os: { type: 'object', properties: { name: nullableString, version: nullableString } },
    app: {
      type: 'object',
      description: 'the browser or app',
      properties: { name: nullableString, version: nullableString, bot: { type: 'boolean' } },
    },
  },
} as const;

export const profileProperties = {
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

const identity = {
  type: 'object',
  properties: { type: { type: 'string' }, value: { type: 'string' } },
  required: ['type', 'value'],
} as const;

export const profileRecord = {
  $id: 'Profile',
  type: 'object',
  properties: {
    ...profileProperties,
    ids: { type: 'array', items: identity, description: 'identities (never returned by /track)' },
    merged: {
      type: 'array',
      description: 'profiles merged into this one: their ids are aliases of it (never returned by /track)',
      items: { type: 'object', properties: { id: { type: 'string' }, time } },
    },
  },
} as const;

const ruleOperation = {
  type: 'object',
  properties: {
    op: { type: 'string' },
    path: { type: 'string' },
    from: { type: 'string' },
    value: {},
    type: { type: 'string' },
  },
} as const;

export const profileRule = {
  $id: 'ProfileRule',
  type: 'object',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    enabled: { type: 'boolean' },
    event_type: { type: 'string' },
    source_id: { type: ['string', 'null'] },
    operations: { type: 'array', items: ruleOperation },
  },
  required: ['id', 'name', 'enabled', 'event_type', 'source_id', 'operations'],
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
    profile_id: { type: ['string', 'null'], description: 'the stored profile the request was resolved to' },
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
        user_agent: { type: ['string', 'null'] },
      },
    },
  },
} as const;

/** The record schemas, added to the app once and referenced by `$id` (`{ $ref: 'Event#' }`). */
export const recordSchemas = [
  eventSource,
  eventRecord,
  sessionRecord,
  profileRecord,
  eventTypeRecord,
  rejectedRecord,
  profileRule,
];
