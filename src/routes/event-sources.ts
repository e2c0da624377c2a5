import type { FastifyInstance } from 'fastify';
import { errors } from '../http/errors.js';
import { sourceFromInput } from '../domain/sources.js';
import { eventSourceInput, type SourceInput } from '../model/payloads.js';
import { deletedOne, errorResponses, idParam, listOf } from '../http/schemas/responses.js';
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
        body: eventSourceInput,
        response: { 200: source, ...errorResponses(400, 401, 422, 503) },
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
        response: { 200: listOf(source), ...errorResponses(401, 503) },
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
        params: idParam,
        response: { 200: source, ...errorResponses(401, 404, 503) },
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
        params: idParam,
        response: { 200: deletedOne, ...errorResponses(401, 404, 503) },
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
