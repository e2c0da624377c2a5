import type { FastifyInstance } from 'fastify';
import { collect } from '../domain/collect.js';
import { clientAddress, userAgent } from '../http/client-address.js';
import type { JsonObject } from '../model/records.js';
import { eventType, idString } from '../model/payloads.js';
import { collectResponse, errorResponses, sourceRefused } from '../http/schemas/responses.js';
import { collectAnswer, collectBody, withExample } from '../http/schemas/examples.js';
import type { RouteOptions } from '../services.js';

export default async function collectRoutes(app: FastifyInstance, { services }: RouteOptions) {
  app.post<{ Body: JsonObject; Params: { event_type: string; source_id: string } }>(
    '/collect/:event_type/:source_id',
    {
      schema: {
        tags: ['tracking'],
        summary: 'Register one profile-less event from a plain JSON body',
        description:
          'The body (a JSON object; empty counts as {}) becomes the event properties. No session or profile.',
        params: {
          type: 'object',
          properties: {
            event_type: { ...eventType, examples: ['coupon-received'] },
            source_id: { ...idString, examples: ['demo'] },
          },
          required: ['event_type', 'source_id'],
        },
        body: withExample({ type: 'object', additionalProperties: true }, collectBody),
        response: {
          200: withExample(collectResponse, collectAnswer, 'The event is stored'),
          ...errorResponses(400, sourceRefused, 406, 413, 415, 422, 429),
        },
      },
      preValidation: async (request) => {
        if (request.body === undefined) request.body = {};
      },
    },
    async (request) =>
      collect(services, {
        eventType: request.params.event_type,
        sourceId: request.params.source_id,
        properties: request.body,
        ip: clientAddress(request),
        userAgent: userAgent(request),
      }),
  );
}
