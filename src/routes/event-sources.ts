import type { FastifyInstance } from 'fastify';
import { errors } from '../http/errors.js';
import { sourceFromInput } from '../domain/sources.js';
import { eventSourceInput, type SourceInput } from '../model/payloads.js';
import {
  deletedOne,
  errorResponses,
  exampleId,
  idParam,
  listOf,
  notFound,
  recordResponse,
} from '../http/schemas/responses.js';
import { sourceInput, sourceRecord, withExample } from '../http/schemas/examples.js';
import type { RouteOptions } from '../services.js';

const tags = ['event sources'];
const source = { $ref: 'EventSource#' };

export default async function eventSourceRoutes(app: FastifyInstance, { services }: RouteOptions) {
  const { store, sources } = services;

  app.post<{ Body: SourceInput }>(
    '/event-source',
    {
      schema: {
        tags,
        summary: 'Create or replace an event source',
        body: withExample(eventSourceInput, sourceInput),
        response: {
          200: recordResponse('EventSource#', 'The source as stored', sourceRecord),
          ...errorResponses(400, 401, 413, 415, 422),
        },
      },
    },
    async (request) => {
      const record = sourceFromInput(request.body);
      await store.putSource(record);
      sources.invalidate(record.id);
      return record;
    },
  );

  app.get(
    '/event-sources',
    {
      schema: {
        tags,
        summary: 'List event sources',
        response: {
          200: withExample(listOf(source), { total: 1, result: [sourceRecord] }, 'Every event source, by id'),
          ...errorResponses(401),
        },
      },
    },
    async () => {
      const result = await store.listSources();
      return { total: result.length, result };
    },
  );

  app.get<{ Params: { id: string } }>(
    '/event-source/:id',
    {
      schema: {
        tags,
        summary: 'One event source',
        params: exampleId(idParam, 'demo'),
        response: {
          200: recordResponse('EventSource#', 'The event source', sourceRecord),
          ...errorResponses(400, 401, notFound('Event source', 'demo'), 422),
        },
      },
    },
    async (request) => {
      const record = await store.getSource(request.params.id);
      if (!record) throw errors.notFound('Event source', request.params.id);
      return record;
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/event-source/:id',
    {
      schema: {
        tags,
        summary: 'Delete an event source',
        params: exampleId(idParam, 'demo'),
        response: {
          200: withExample(deletedOne, { deleted: 1 }, 'Deleted'),
          ...errorResponses(400, 401, notFound('Event source', 'demo'), 422),
        },
      },
    },
    async (request) => {
      const deleted = await store.deleteSource(request.params.id);
      sources.invalidate(request.params.id);
      if (!deleted) throw errors.notFound('Event source', request.params.id);
      return { deleted: 1 };
    },
  );
}
