import type { FastifyInstance } from 'fastify';
import { errors } from '../http/errors.js';
import { errorResponses } from '../http/schemas/responses.js';
import { withExample } from '../http/schemas/examples.js';
import type { RouteOptions } from '../services.js';

export default async function healthRoutes(app: FastifyInstance, { services }: RouteOptions) {
  app.get(
    '/health',
    {
      schema: {
        tags: ['service'],
        summary: 'Readiness: 200 once the store is reachable, 503 otherwise',
        response: {
          200: withExample(
            { type: 'object', properties: { status: { type: 'string', const: 'ok' } } },
            { status: 'ok' },
            'The store is reachable',
          ),
          ...errorResponses({
            status: 503,
            description: 'The store is unreachable, or the service is shutting down',
            example: { detail: 'Store unavailable, retry later' },
          }),
        },
      },
    },
    async () => {
      const up = await services.store.ping().catch(() => false);
      if (!up) throw errors.storeUnavailable();
      return { status: 'ok' };
    },
  );
}
