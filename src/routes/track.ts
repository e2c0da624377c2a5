import type { FastifyInstance } from 'fastify';
import { clientAddress, userAgent } from '../http/client-address.js';
import { errors } from '../http/errors.js';
import type { TrackPayload } from '../model/payloads.js';
import { track } from '../domain/track/track.js';
import { trackPayload } from '../model/payloads.js';
import { errorResponses, sourceRefused, trackResponse } from '../http/schemas/responses.js';
import { trackAnswer, trackRequest, withExample } from '../http/schemas/examples.js';
import type { RouteOptions } from '../services.js';

export default async function trackRoutes(app: FastifyInstance, { services }: RouteOptions) {
  const { maxEvents, debug } = services.config;
  const deps = { ...services, debugAllowed: debug };

  app.post<{ Body: TrackPayload; Querystring: { profile_less?: boolean } }>(
    '/track',
    {
      schema: {
        tags: ['tracking'],
        summary: 'Register events of a tracker payload',
        description:
          'Checks the source, resolves the session and profile, stores the events and answers once they are committed. The example names the event source `demo`: create it first (the example of POST /event-source does).',
        querystring: {
          type: 'object',
          properties: {
            profile_less: { type: 'boolean', default: false, description: 'no profile is loaded or created' },
          },
        },
        body: withExample(trackPayload, trackRequest),
        response: {
          200: withExample(
            trackResponse,
            trackAnswer,
            'The request is processed and what it stored is committed',
          ),
          ...errorResponses(400, sourceRefused, 406, 413, 415, 422, 429),
        },
      },
      preValidation: async (request) => {
        const events = (request.body as { events?: unknown } | undefined)?.events;
        if (Array.isArray(events) && events.length > maxEvents)
          throw errors.tooManyEvents(maxEvents, events.length);
      },
    },
    async (request) =>
      track(deps, {
        payload: request.body,
        profileLess: request.query.profile_less === true,
        ip: clientAddress(request),
        userAgent: userAgent(request),
      }),
  );
}
