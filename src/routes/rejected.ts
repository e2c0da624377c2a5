import { pageOf, pageParams } from '../http/schemas/pages.js';
import type { FastifyInstance } from 'fastify';
import { errors } from '../http/errors.js';
import { cursorPage } from '../http/paging.js';
import { replay } from '../domain/replay.js';
import { eventType, idString } from '../model/payloads.js';
import {
  collectResponse,
  errorResponses,
  exampleId,
  idParam,
  notFound,
  recordResponse,
  trackResponse,
} from '../http/schemas/responses.js';
import { rejectedRecord, trackAnswer, validationFailed, withExample } from '../http/schemas/examples.js';
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
  const replayDeps = { ...services, debugAllowed: services.config.debug };

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
            ...pageParams,
          },
        },
        response: {
          200: withExample(
            pageOf('Rejected#'),
            { result: [rejectedRecord], next: null },
            'A page of rejected requests, newest first; `next` is the cursor of the following page',
          ),
          ...errorResponses(401, 422),
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
        params: exampleId(idParam, rejectedRecord.id),
        response: {
          200: recordResponse('Rejected#', 'The rejected request', rejectedRecord),
          ...errorResponses(400, 401, notFound('Rejected request', rejectedRecord.id), 422),
        },
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
          'Answers as /track or /collect would. Once accepted, the record is removed in the same commit that stores the events: of replays of one record at once, exactly one stores them and answers 200, the others answer 404 as a later replay would. A request that fails again stays and the 406 lists the current failures. A request whose profile was erased since is dropped: 410.',
        params: exampleId(idParam, rejectedRecord.id),
        response: {
          200: {
            anyOf: [trackResponse, collectResponse],
            description: 'Accepted: the answer of /track or /collect; the record left the quarantine',
            examples: [trackAnswer],
          },
          ...errorResponses(
            400,
            {
              status: 401,
              description:
                'The management token is missing or wrong, or the event source of the request is now unknown or disabled',
              example: { detail: 'Not authenticated' },
            },
            {
              ...notFound('Rejected request', rejectedRecord.id),
              description:
                'No rejected request with this id: never kept, replayed already (or by a replay running at the same time), erased or pruned',
            },
            {
              status: 406,
              description: 'Refused by validation again: the record stays, with these current reasons',
              example: validationFailed,
            },
            {
              status: 410,
              description: 'The profile the request was resolved to was erased since: the record is dropped',
              example: { detail: 'The profile of this request was erased: it is not replayed' },
            },
            413,
            415,
            422,
            {
              status: 429,
              description: 'The event source of the request is over its rate limit',
              example: { detail: 'Rate limit of 100 requests per second exceeded for source `demo`' },
            },
          ),
        },
      },
    },
    async (request) => {
      const found = await store.getRejected(request.params.id);
      if (!found) throw errors.notFound('Rejected request', request.params.id);
      return replay(replayDeps, found);
    },
  );
}
