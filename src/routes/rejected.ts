import type { FastifyInstance } from 'fastify';
import { errors } from '../http/errors.js';
import { cursorPage } from '../http/paging.js';
import { collect } from '../domain/collect.js';
import type { JsonObject } from '../model/records.js';
import { track } from '../domain/track/track.js';
import type { TrackPayload } from '../model/payloads.js';
import { eventType, idString } from '../model/payloads.js';
import { collectResponse, errorResponses, idParam, trackResponse } from '../http/schemas/responses.js';
import type { RouteOptions } from '../services.js';

const tags = ['rejected events'];

interface RejectedQuery {
  event_type?: string;
  source_id?: string;
  limit: number;
  cursor?: string;
}

export default async function rejectedRoutes(app: FastifyInstance, { services }: RouteOptions) {
  const { store, cursors } = services;
  // Replays run the same pipelines as the endpoints, without quarantining again.
  const replayDeps = { ...services, quarantine: undefined, debugAllowed: services.config.debug };

  app.get<{ Querystring: RejectedQuery }>(
    '/event/rejected',
    {
      schema: {
        tags,
        summary: 'Requests refused by validation, newest first, paged by cursor',
        querystring: {
          type: 'object',
          properties: {
            event_type: eventType,
            source_id: idString,
            limit: { type: 'integer', minimum: 1, maximum: 1000, default: 50 },
            cursor: { type: 'string', maxLength: 1024 },
          },
        },
        response: {
          200: {
            type: 'object',
            properties: {
              result: { type: 'array', items: { $ref: 'Rejected#' } },
              next: { type: ['string', 'null'] },
            },
          },
          ...errorResponses(401, 422, 503),
        },
      },
    },
    async (request) => {
      const q = request.query;
      return cursorPage(
        cursors,
        'rejected',
        q.limit,
        q.cursor,
        (limit, after) =>
          store.listRejected({ eventType: q.event_type, sourceId: q.source_id }, limit, after),
        (record) => ({ insert: record.time, id: record.id }),
      );
    },
  );

  app.get<{ Params: { id: string } }>(
    '/event/rejected/:id',
    {
      schema: {
        tags,
        summary: 'One rejected request with its failures and original payload',
        params: idParam,
        response: { 200: { $ref: 'Rejected#' }, ...errorResponses(401, 404, 503) },
      },
    },
    async (request) => {
      const found = await store.getRejected(request.params.id);
      if (!found) throw errors.notFound('Rejected request', request.params.id);
      return found;
    },
  );

  app.post<{ Params: { id: string } }>(
    '/event/rejected/:id/replay',
    {
      schema: {
        tags,
        summary: 'Run a rejected request through its endpoint again',
        description:
          'Answers as /track or /collect would. Once accepted, the record is removed; a request that fails again stays and the 406 lists the current failures.',
        params: idParam,
        response: {
          200: { anyOf: [trackResponse, collectResponse] },
          ...errorResponses(401, 404, 406, 503),
        },
      },
    },
    async (request) => {
      const found = await store.getRejected(request.params.id);
      if (!found) throw errors.notFound('Rejected request', request.params.id);
      const { body, profile_less, event_type, ip = null, user_agent: userAgent = null } = found.request;
      // Event times are taken against when the request was first received.
      const receivedAt = new Date(found.time);
      const answer =
        found.endpoint === 'track'
          ? await track(replayDeps, {
              payload: body as TrackPayload,
              profileLess: profile_less === true,
              ip,
              userAgent,
              receivedAt,
            })
          : await collect(replayDeps, {
              eventType: event_type ?? found.event_types[0] ?? '',
              sourceId: found.source_id,
              properties: body as JsonObject,
              ip,
              userAgent,
              receivedAt,
            });
      await store.deleteRejected(found.id);
      return answer;
    },
  );
}
