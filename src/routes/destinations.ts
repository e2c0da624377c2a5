import { pageOf, pageParams } from '../http/schemas/pages.js';
import type { FastifyInstance } from 'fastify';
import { errors } from '../http/errors.js';
import { cursorPage } from '../http/paging.js';
import { destinationStatus, retryFailed } from '../domain/delivery/management.js';
import { destinationFromInput } from '../domain/delivery/records.js';
import { destinationId, destinationInput, type DestinationInput } from '../model/payloads.js';
import {
  destinationExample,
  destinationInputExample,
  destinationStatusExample,
  failedBatchExample,
  retryOutcome,
} from '../http/schemas/destinations.js';
import { withExample } from '../http/schemas/examples.js';
import {
  deletedOne,
  errorResponses,
  exampleId,
  listOf,
  notFound as notFoundCase,
  recordResponse,
} from '../http/schemas/responses.js';
import type { RouteOptions } from '../services.js';

const tags = ['destinations'];
const destination = { $ref: 'Destination#' };
const idParams = exampleId(
  { type: 'object', properties: { id: destinationId }, required: ['id'] } as const,
  'crm',
);
const batchParams = exampleId(
  {
    type: 'object',
    properties: { id: destinationId, batch_id: { type: 'string', maxLength: 255 } },
    required: ['id', 'batch_id'],
  } as const,
  'crm',
  failedBatchExample.batch_id,
);
const unknown = notFoundCase('Destination', 'crm');

interface FailedQuery {
  limit: number;
  cursor?: string;
}

export default async function destinationRoutes(app: FastifyInstance, { services }: RouteOptions) {
  const { store, deliveries, cursors } = services;
  const notFound = (id: string) => errors.notFound('Destination', id);

  app.post<{ Body: DestinationInput }>(
    '/destination',
    {
      schema: {
        tags,
        summary: 'Create or replace a destination',
        description:
          'A new destination receives the events stored from now on; a replaced one keeps its place and secret.',
        body: withExample(destinationInput, destinationInputExample),
        response: {
          200: recordResponse(
            'Destination#',
            'The destination as stored, its secret included',
            destinationExample,
          ),
          ...errorResponses(400, 401, 413, 415, 422),
        },
      },
    },
    async (request) => {
      const existing = request.body.id ? await store.destinations.get(request.body.id) : null;
      const record = destinationFromInput(request.body, existing);
      await store.destinations.put(record);
      deliveries.changed(record.id);
      return record;
    },
  );

  app.get(
    '/destinations',
    {
      schema: {
        tags,
        summary: 'List destinations',
        response: {
          200: withExample(
            listOf(destination),
            { total: 1, result: [destinationExample] },
            'Every destination, by id',
          ),
          ...errorResponses(401),
        },
      },
    },
    async () => {
      const result = await store.destinations.list();
      return { total: result.length, result };
    },
  );

  app.get<{ Params: { id: string } }>(
    '/destination/:id',
    {
      schema: {
        tags,
        summary: 'One destination with the status of its delivery',
        params: idParams,
        response: {
          200: recordResponse(
            'DestinationStatus#',
            'The destination and its delivery',
            destinationStatusExample,
          ),
          ...errorResponses(400, 401, unknown, 422),
        },
      },
    },
    async (request) => {
      const found = await destinationStatus(store, request.params.id);
      if (!found) throw notFound(request.params.id);
      return found;
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/destination/:id',
    {
      schema: {
        tags,
        summary: 'Delete a destination with its failed list',
        params: idParams,
        response: {
          200: withExample(deletedOne, { deleted: 1 }, 'Deleted'),
          ...errorResponses(400, 401, unknown, 422),
        },
      },
    },
    async (request) => {
      const deleted = await store.destinations.delete(request.params.id);
      deliveries.changed(request.params.id);
      if (!deleted) throw notFound(request.params.id);
      return { deleted: 1 };
    },
  );

  app.get<{ Params: { id: string }; Querystring: FailedQuery }>(
    '/destination/:id/failed',
    {
      schema: {
        tags,
        summary: 'Failed batches of a destination, newest first, paged by cursor',
        params: idParams,
        querystring: {
          type: 'object',
          properties: {
            ...pageParams,
          },
        },
        response: {
          200: withExample(
            pageOf('FailedBatch#'),
            { result: [failedBatchExample], next: null },
            'The failed batches, newest first, and the cursor of the next page',
          ),
          ...errorResponses(400, 401, unknown, 422),
        },
      },
    },
    async (request) => {
      const { id } = request.params;
      if (!(await store.destinations.get(id))) throw notFound(id);
      return cursorPage(
        cursors,
        `failed:${id}`,
        request.query.limit,
        request.query.cursor,
        (limit, after) => store.destinations.listFailed(id, limit, after),
        (batch) => ({ insert: batch.failed_at, id: batch.batch_id }),
      );
    },
  );

  app.post<{ Params: { id: string; batch_id: string } }>(
    '/destination/:id/failed/:batch_id/retry',
    {
      schema: {
        tags,
        summary: 'Send a failed batch again',
        description:
          'One attempt, answered when it ends: delivered, the batch leaves the failed list; otherwise it stays with the new error.',
        params: batchParams,
        response: {
          200: withExample(
            retryOutcome,
            { batch_id: failedBatchExample.batch_id, delivered: true, error: null },
            'The outcome of the attempt',
          ),
          ...errorResponses(
            400,
            401,
            {
              status: 404,
              description: 'No destination with this id, or no such batch in its failed list',
              example: { detail: `Failed batch \`${failedBatchExample.batch_id}\` not found` },
            },
            413,
            415,
            422,
          ),
        },
      },
    },
    async (request) => {
      const { id, batch_id } = request.params;
      const outcome = await retryFailed(
        {
          store,
          sender: services.sender,
          clock: services.clock,
          timeoutMs: services.config.deliveryTimeoutMs,
        },
        id,
        batch_id,
      );
      if (outcome) return outcome;
      if (!(await store.destinations.get(id))) throw notFound(id);
      throw errors.notFound('Failed batch', batch_id);
    },
  );
}
