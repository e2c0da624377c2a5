import { pageOf, pageParams } from '../http/schemas/pages.js';
import type { FastifyInstance } from 'fastify';
import { errors } from '../http/errors.js';
import { cursorPage } from '../http/paging.js';
import type { EventFilter } from '../storage/store.js';
import { dateTime, eventType, idString } from '../model/payloads.js';
import { isoTime, parseTime } from '../model/time.js';
import { errorResponses, exampleId, idParam, notFound, recordResponse } from '../http/schemas/responses.js';
import { eventRecord, nextCursor, sessionRecord, withExample } from '../http/schemas/examples.js';
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
    ...pageParams,
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
        params: exampleId(idParam, eventRecord.id),
        response: {
          200: recordResponse('Event#', 'The event', eventRecord),
          ...errorResponses(400, 401, notFound('Event', eventRecord.id), 422),
        },
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
          200: withExample(
            pageOf('Event#'),
            { result: [eventRecord], next: nextCursor },
            'A page of events, newest first; `next` is the cursor of the following page (null after the last)',
          ),
          ...errorResponses(401, 422),
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
        params: exampleId(idParam, sessionRecord.id),
        response: {
          200: recordResponse('Session#', 'The session', sessionRecord),
          ...errorResponses(400, 401, notFound('Session', sessionRecord.id), 422),
        },
      },
    },
    async (request) => {
      const stored = await store.getSession(request.params.id);
      if (!stored) throw errors.notFound('Session', request.params.id);
      return stored.record;
    },
  );
}
