/** JSON Schemas of destinations as the API returns them (docs/api.md#destination). */

const strings = { type: 'array', items: { type: 'string' } } as const;

const destinationProperties = {
  id: { type: 'string' },
  name: { type: 'string' },
  url: { type: 'string' },
  enabled: { type: 'boolean' },
  event_types: strings,
  source_ids: strings,
  batch_size: { type: 'integer' },
  headers: { type: 'object', additionalProperties: { type: 'string' } },
  secret: { type: 'string', description: 'Standard Webhooks signing secret' },
} as const;

const destinationRequired = [
  'id',
  'name',
  'url',
  'enabled',
  'event_types',
  'source_ids',
  'batch_size',
  'headers',
  'secret',
];

export const destinationRecord = {
  $id: 'Destination',
  type: 'object',
  properties: destinationProperties,
  required: destinationRequired,
} as const;

export const destinationWithStatus = {
  $id: 'DestinationStatus',
  type: 'object',
  properties: {
    ...destinationProperties,
    status: {
      type: 'object',
      properties: {
        delivered: { type: 'integer', description: 'events delivered (2xx)' },
        pending: { type: 'integer', description: 'stored events matching, not delivered yet' },
        failing_since: { type: ['string', 'null'], format: 'date-time' },
        last_error: { type: ['string', 'null'] },
        failed: { type: 'integer', description: 'batches in the failed list' },
      },
      required: ['delivered', 'pending', 'failing_since', 'last_error', 'failed'],
    },
  },
  required: [...destinationRequired, 'status'],
} as const;

export const failedBatch = {
  $id: 'FailedBatch',
  type: 'object',
  properties: {
    batch_id: { type: 'string' },
    failed_at: { type: 'string', format: 'date-time' },
    first_attempt: { type: 'string', format: 'date-time' },
    attempts: { type: 'integer' },
    error: { type: 'string' },
    events: { type: 'integer' },
    ids: strings,
  },
} as const;

export const retryOutcome = {
  type: 'object',
  properties: {
    batch_id: { type: 'string' },
    delivered: { type: 'boolean' },
    error: { type: ['string', 'null'] },
  },
} as const;

export const destinationSchemas = [destinationRecord, destinationWithStatus, failedBatch];

/** Examples shown by /docs: the destination `crm` receiving the `demo` source's purchases. */
export const destinationInputExample = {
  id: 'crm',
  name: 'CRM',
  url: 'https://crm.example/hooks/events',
  event_types: ['purchase'],
  headers: { authorization: 'Bearer crm-token' },
};

export const destinationExample = {
  ...destinationInputExample,
  enabled: true,
  source_ids: [],
  batch_size: 100,
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
};

export const destinationStatusExample = {
  ...destinationExample,
  status: { delivered: 120, pending: 0, failing_since: null, last_error: null, failed: 1 },
};

export const failedBatchExample = {
  batch_id: 'msg_01a20a0d-4aa3-73cf-91ba-032f19ab331c',
  failed_at: '2026-11-23T20:16:01.741Z',
  first_attempt: '2026-11-23T20:16:01.512Z',
  attempts: 1,
  error: 'HTTP 400: unknown field `price`',
  events: 1,
  ids: ['01a20a0d-4aa3-73cf-91ba-032f19ab331c'],
};
