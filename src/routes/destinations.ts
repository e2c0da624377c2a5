import type { FastifyInstance } from 'fastify';
import { errors } from '../http/errors.js';
import { cursorPage } from '../http/paging.js';
import { destinationStatus, retryFailed } from '../domain/delivery/management.js';
import { destinationFromInput } from '../domain/delivery/records.js';
import { destinationId, destinationInput, type DestinationInput } from '../model/payloads.js';
import { retryOutcome } from '../http/schemas/destinations.js';
import { deletedOne, errorResponses, listOf } from '../http/schemas/responses.js';
import type { RouteOptions } from '../services.js';

const tags = ['destinations'];
const destination = { $ref: 'Destination#' };
const idParams = { type: 'object', properties: { id: destinationId }, required: ['id'] } as const;
const batchParams = {
  type: 'object',
  properties: { id: destinationId, batch_id: { type: 'string', maxLength: 255 } },
  required: ['id', 'batch_id'],
} as const;

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
        body: destinationInput,
        response: { 200: destination, ...errorResponses(400, 401, 422, 503) },
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
        response: { 200: listOf(destination), ...errorResponses(401, 503) },
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
        response: { 200: { $ref: 'DestinationStatus#' }, ...errorResponses(401, 404, 422, 503) },
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
        response: { 200: deletedOne, ...errorResponses(401, 404, 422, 503) },
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
            limit: { type: 'integer', minimum: 1, maximum: 1000, default: 50 },
            cursor: { type: 'string', maxLength: 1024 },
          },
        },
        response: {
          200: {
            type: 'object',
            properties: {
              result: { type: 'array', items: { $ref: 'FailedBatch#' } },
              next: { type: ['string', 'null'] },
            },
          },
          ...errorResponses(401, 404, 422, 503),
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
        response: { 200: retryOutcome, ...errorResponses(401, 404, 422, 503) },
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
