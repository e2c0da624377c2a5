import type { FastifyInstance } from 'fastify';
import { errors } from '../http/errors.js';
import { errorResponses } from '../http/schemas/responses.js';
import { eventStatsResponse } from '../http/schemas/stats.js';
import { eventStats, statsWindow } from '../domain/event-stats.js';
import { dateTime, eventType, idString } from '../model/payloads.js';
import { parseTime } from '../model/time.js';
import type { RouteOptions } from '../services.js';

interface StatsQuery {
  since?: string;
  until?: string;
  source_id?: string;
  type?: string;
}

/** GET /events/stats (docs/api.md#event-stats): stored events per minute and type, counted by the store. */
export default async function eventStatsRoutes(app: FastifyInstance, { services }: RouteOptions) {
  const { store, clock } = services;

  app.get<{ Querystring: StatsQuery }>(
    '/events/stats',
    {
      schema: {
        tags: ['events'],
        summary: 'Stored events per minute and event type over a window of at most 24 hours',
        description:
          'Counts the events inserted (`metadata.time.insert`) in the window, per minute and per event type: the 20 most frequent types by name, the others together. Minutes without events are left out.',
        querystring: {
          type: 'object',
          properties: {
            since: {
              ...dateTime,
              description:
                'start of the window, moved back to its minute (default: 30 minutes before `until`)',
            },
            until: { ...dateTime, description: 'end of the window, not included (default: now)' },
            source_id: idString,
            type: eventType,
          },
        },
        response: {
          200: eventStatsResponse,
          ...errorResponses(401, {
            status: 422,
            description: 'A query field is malformed, or the window is empty or longer than 24 hours',
            example: {
              detail: [
                {
                  loc: ['querystring', 'since'],
                  msg: 'must be at most 24 hours before `until`',
                  type: 'value_error',
                },
              ],
            },
          }),
        },
      },
    },
    async (request) => {
      const q = request.query;
      const time = (text: string | undefined) =>
        text === undefined ? undefined : (parseTime(text) ?? undefined);
      const window = statsWindow(clock().getTime(), time(q.since), time(q.until));
      if ('field' in window) throw errors.invalid(['querystring', window.field], window.msg);
      return eventStats(store, window, { sourceId: q.source_id, type: q.type });
    },
  );
}
