/**
 * JSON Schemas of the request bodies, and the types derived from them: each field is declared once.
 * The HTTP layer validates bodies with these schemas (422 naming the field); the pipeline receives
 * the derived types. Reference: docs/api.md.
 */
import type { FromSchema } from 'json-schema-to-ts';

const nullableObject = { type: ['object', 'null'], additionalProperties: true } as const;

export const idString = { type: 'string', minLength: 1, maxLength: 128 } as const;

export const eventType = { type: 'string', minLength: 1, maxLength: 255 } as const;

/** An RFC 3339 date-time with an offset (`format` is checked by src/model/time.ts: parseTime). */
export const dateTime = { type: 'string', format: 'date-time' } as const;

const optionalDateTime = { ...dateTime, type: ['string', 'null'] } as const;

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
    sent_at: {
      ...optionalDateTime,
      description: 'when the client sent this request (set anew on every attempt)',
    },
    events: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['type'],
        properties: {
          type: eventType,
          id: {
            type: ['string', 'null'],
            minLength: 1,
            maxLength: 128,
            description:
              "the client's id of the event: an event whose id was stored for the source is a duplicate",
          },
          timestamp: { ...optionalDateTime, description: 'when the event happened, by the device clock' },
          properties: nullableObject,
          context: nullableObject,
          options: { type: ['object', 'null'], properties: { save: { type: 'boolean' } } },
        },
      },
    },
  },
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

const jsonSchemaMap = {
  type: 'object',
  description: 'Target expression (`event@properties`, `session@context.page`, `profile@...`) → JSON Schema',
  additionalProperties: { description: 'a JSON Schema (object or boolean)' },
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

/** The operations of profile rules (docs/api.md#operations). */
export const RULE_OP_NAMES = [
  'set',
  'set_once',
  'unset',
  'increment',
  'append',
  'add_segment',
  'remove_segment',
  'identify',
] as const;

const ruleOperation = {
  type: 'object',
  required: ['op'],
  description:
    '`{op, path, value | from}`; `add_segment`/`remove_segment` take no path, `identify` a `type` instead',
  properties: {
    op: {
      type: 'string',
      enum: RULE_OP_NAMES,
    },
    path: {
      type: 'string',
      minLength: 1,
      maxLength: 255,
      description: 'dotted path under traits.public, traits.private, consents or interests',
    },
    from: {
      type: 'string',
      minLength: 1,
      maxLength: 255,
      description: 'dotted path of the value in the event (`properties.email`)',
    },
    value: { description: 'a literal JSON value' },
    type: { type: 'string', minLength: 1, maxLength: 32, description: 'identity type of `identify`' },
  },
} as const;

export const profileRuleInput = {
  type: 'object',
  required: ['event_type', 'operations'],
  description: 'A profile rule; absent fields take their defaults, a missing id is generated.',
  properties: {
    id: idString,
    name: { type: 'string', maxLength: 255 },
    enabled: { type: 'boolean' },
    event_type: eventType,
    source_id: { type: ['string', 'null'], minLength: 1, maxLength: 128 },
    operations: { type: 'array', minItems: 1, maxItems: 100, items: ruleOperation },
  },
} as const;

export const destinationId = {
  type: 'string',
  minLength: 1,
  maxLength: 128,
  pattern: '^[A-Za-z0-9._:-]+$',
  description: 'letters, digits, `.`, `_`, `:` and `-`',
} as const;

export const destinationInput = {
  type: 'object',
  description: 'A destination; absent fields take their defaults, a missing id and secret are generated.',
  required: ['url'],
  properties: {
    id: destinationId,
    name: { type: 'string', maxLength: 255 },
    url: {
      type: 'string',
      minLength: 1,
      maxLength: 2048,
      pattern: '^[^\\u0000-\\u0020\\u007f]+$',
      description: 'http:// or https://, without spaces or control characters',
    },
    enabled: { type: 'boolean' },
    event_types: { type: 'array', maxItems: 100, items: eventType, description: 'empty: every type' },
    source_ids: { type: 'array', maxItems: 100, items: idString, description: 'empty: every source' },
    batch_size: { type: 'integer', minimum: 1, maximum: 1000 },
    headers: {
      type: 'object',
      maxProperties: 50,
      propertyNames: { pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$" },
      additionalProperties: { type: 'string', maxLength: 4096, pattern: '^[^\\r\\n\\u0000]*$' },
      description: 'sent with every delivery',
    },
    secret: {
      type: 'string',
      maxLength: 200,
      pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$',
      description: 'Standard Webhooks secret: `whsec_` and 24 to 64 bytes in base64',
    },
  },
} as const;

export type TrackPayload = FromSchema<typeof trackPayload>;
export type ProfileRuleInput = FromSchema<typeof profileRuleInput>;
export type EventInput = TrackPayload['events'][number];
export type SourceInput = FromSchema<typeof eventSourceInput>;
export type EventTypeInput = FromSchema<typeof eventTypeInput>;
export type DestinationInput = FromSchema<typeof destinationInput>;
