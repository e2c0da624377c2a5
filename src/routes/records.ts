import type { FastifyInstance } from 'fastify';
import { errors } from '../http/errors.js';
import { cursorPage } from '../http/paging.js';
import type { EventFilter } from '../storage/store.js';
import { dateTime, eventType, idString } from '../model/payloads.js';
import { isoTime, parseTime } from '../model/time.js';
import { errorResponses, idParam } from '../http/schemas/responses.js';
import type { RouteOptions } from '../services.js';

interface EventsQuery {
  profile_id?: string;
  session_id?: string;
  type?: string;
  source_id?: string;
  client_id?: string;
  since?: string;
  until?: string;
  limit: number;
  cursor?: string;
}

const eventsQuery = {
  type: 'object',
  properties: {
    profile_id: idString,
    session_id: idString,
    type: eventType,
    source_id: idString,
    client_id: { ...idString, description: 'events the client gave this id (`metadata.client_id`)' },
    since: {
      ...dateTime,
      description: 'events that happened (`metadata.time.create`) at or after this time',
    },
    until: { ...dateTime, description: 'events that happened (`metadata.time.create`) before this time' },
    limit: { type: 'integer', minimum: 1, maximum: 1000, default: 50 },
    cursor: { type: 'string', maxLength: 1024, description: 'the `next` of the previous page' },
  },
} as const;

/** A time of the query (checked by its schema) as the stores compare times: ISO 8601 in UTC. */
function utc(time: string | undefined): string | undefined {
  const ms = time === undefined ? null : parseTime(time);
  return ms === null ? undefined : isoTime(ms);
}

export default async function recordRoutes(app: FastifyInstance, { services }: RouteOptions) {
  const { store, cursors } = services;

  app.get<{ Params: { id: string } }>(
    '/event/:id',
    {
      schema: {
        tags: ['events'],
        summary: 'One stored event',
        params: idParam,
        response: { 200: { $ref: 'Event#' }, ...errorResponses(401, 404, 503) },
      },
    },
    async (request) =>
      (await store.getEvent(request.params.id)) ??
      Promise.reject(errors.notFound('Event', request.params.id)),
  );

  app.get<{ Querystring: EventsQuery }>(
    '/events',
    {
      schema: {
        tags: ['events'],
        summary: 'Stored events, newest first, paged by cursor',
        querystring: eventsQuery,
        response: {
          200: {
            type: 'object',
            properties: {
              result: { type: 'array', items: { $ref: 'Event#' } },
              next: { type: ['string', 'null'] },
            },
          },
          ...errorResponses(401, 422, 503),
        },
      },
    },
    async (request) => {
      const q = request.query;
      const filter: EventFilter = {
        profileId: q.profile_id,
        sessionId: q.session_id,
        type: q.type,
        sourceId: q.source_id,
        clientId: q.client_id,
        since: utc(q.since),
        until: utc(q.until),
      };
      return cursorPage(
        cursors,
        'events',
        q.limit,
        q.cursor,
        (limit, after) => store.listEvents(filter, limit, after),
        (event) => ({ insert: event.metadata.time.insert, id: event.id }),
      );
    },
  );

  app.get<{ Params: { id: string } }>(
    '/session/:id',
    {
      schema: {
        tags: ['sessions'],
        summary: 'One stored session',
        params: idParam,
        response: { 200: { $ref: 'Session#' }, ...errorResponses(401, 404, 503) },
      },
    },
    async (request) => {
      const stored = await store.getSession(request.params.id);
      if (!stored) throw errors.notFound('Session', request.params.id);
      return stored.record;
    },
  );

  app.get<{ Params: { id: string } }>(
    '/profile/:id',
    {
      schema: {
        tags: ['profiles'],
        summary: 'One stored profile',
        params: idParam,
        response: { 200: { $ref: 'Profile#' }, ...errorResponses(401, 404, 503) },
      },
    },
    async (request) =>
      (await store.getProfile(request.params.id)) ??
      Promise.reject(errors.notFound('Profile', request.params.id)),
  );

  app.delete<{ Params: { id: string } }>(
    '/profile/:id',
    {
      schema: {
        tags: ['profiles'],
        summary: 'Erase a profile with its sessions and events',
        params: idParam,
        response: {
          200: {
            type: 'object',
            properties: {
              deleted: {
                type: 'object',
                properties: {
                  profiles: { type: 'integer' },
                  sessions: { type: 'integer' },
                  events: { type: 'integer' },
                },
              },
            },
          },
          ...errorResponses(401, 404, 503),
        },
      },
    },
    async (request) => {
      const deleted = await store.eraseProfile(request.params.id);
      if (!deleted) throw errors.notFound('Profile', request.params.id);
      return { deleted };
    },
  );
}
