import type { FastifyInstance } from 'fastify';
import { clientAddress, userAgent } from '../http/client-address.js';
import { errors } from '../http/errors.js';
import type { TrackPayload } from '../model/payloads.js';
import { track } from '../domain/track/track.js';
import { trackPayload } from '../model/payloads.js';
import { errorResponses, trackResponse } from '../http/schemas/responses.js';
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
          'Checks the source, resolves the session and profile, stores the events and answers once they are committed.',
        querystring: {
          type: 'object',
          properties: {
            profile_less: { type: 'boolean', default: false, description: 'no profile is loaded or created' },
          },
        },
        body: trackPayload,
        response: { 200: trackResponse, ...errorResponses(400, 401, 406, 413, 422, 503) },
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
