import type { FastifyInstance } from 'fastify';
import { errors } from '../http/errors.js';
import { eventTypeFromInput } from '../domain/event-types.js';
import { compileEventType } from '../domain/validation/compile.js';
import { eventType, eventTypeInput, type EventTypeInput } from '../model/payloads.js';
import {
  deletedOne,
  errorResponses,
  exampleId,
  listOf,
  notFound,
  recordResponse,
} from '../http/schemas/responses.js';
import {
  eventTypeInput as eventTypeExample,
  eventTypeRecord,
  withExample,
} from '../http/schemas/examples.js';
import type { RouteOptions } from '../services.js';

const tags = ['validation schemas'];
const record = { $ref: 'EventType#' };
const typeParam = {
  type: 'object',
  properties: { event_type: eventType },
  required: ['event_type'],
} as const;

export default async function eventManagementRoutes(app: FastifyInstance, { services }: RouteOptions) {
  const { store, validator } = services;

  app.post<{ Body: EventTypeInput }>(
    '/event/management',
    {
      schema: {
        tags,
        summary: 'Add or replace the metadata and validation schema of an event type',
        description:
          'Every key of validation.json_schema must be a target (`event|session|profile@path` or `@...`) and every value a JSON Schema (draft 2020-12, or draft-07 by $schema) without remote references; otherwise 422 naming the key.',
        body: withExample(eventTypeInput, eventTypeExample),
        response: {
          200: recordResponse('EventType#', 'The event type as stored', eventTypeRecord),
          ...errorResponses(400, 401, 413, 415, 422),
        },
      },
    },
    async (request) => {
      const stored = eventTypeFromInput(request.body);
      compileEventType(stored); // a 422 naming the key when a target or schema cannot be used
      await store.putEventType(stored);
      validator.invalidate(stored.event_type);
      return stored;
    },
  );

  app.get(
    '/event/management',
    {
      schema: {
        tags,
        summary: 'List event types with their validation schemas',
        response: {
          200: withExample(
            listOf(record),
            { total: 1, result: [eventTypeRecord] },
            'Every event type, by type',
          ),
          ...errorResponses(401),
        },
      },
    },
    async () => {
      const result = await store.listEventTypes();
      return { total: result.length, result };
    },
  );

  app.get<{ Params: { event_type: string } }>(
    '/event/management/:event_type',
    {
      schema: {
        tags,
        summary: 'One event type with its validation schema',
        params: exampleId(typeParam, 'purchase'),
        response: {
          200: recordResponse('EventType#', 'The event type', eventTypeRecord),
          ...errorResponses(400, 401, notFound('Event type', 'purchase'), 422),
        },
      },
    },
    async (request) => {
      const found = await store.getEventType(request.params.event_type);
      if (!found) throw errors.notFound('Event type', request.params.event_type);
      return found;
    },
  );

  app.delete<{ Params: { event_type: string } }>(
    '/event/management/:event_type',
    {
      schema: {
        tags,
        summary: 'Delete the metadata and validation schema of an event type',
        params: exampleId(typeParam, 'purchase'),
        response: {
          200: withExample(deletedOne, { deleted: 1 }, 'Deleted'),
          ...errorResponses(400, 401, notFound('Event type', 'purchase'), 422),
        },
      },
    },
    async (request) => {
      const deleted = await store.deleteEventType(request.params.event_type);
      validator.invalidate(request.params.event_type);
      if (!deleted) throw errors.notFound('Event type', request.params.event_type);
      return { deleted: 1 };
    },
  );
}
