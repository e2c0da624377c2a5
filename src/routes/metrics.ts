import type { FastifyInstance } from 'fastify';
import { errorResponses } from '../http/schemas/responses.js';
import type { Metrics } from '../metrics.js';

export default async function metricsRoutes(app: FastifyInstance, { metrics }: { metrics: Metrics }) {
  app.get(
    '/metrics',
    {
      schema: {
        tags: ['service'],
        summary: 'Prometheus metrics (text exposition format)',
        response: {
          200: {
            description: 'The metrics in the Prometheus text format',
            content: { 'text/plain': { schema: { type: 'string' } } },
          },
          ...errorResponses(401),
        },
      },
    },
    async (_request, reply) => {
      const text = await metrics.registry.metrics();
      return reply.type(metrics.registry.contentType).send(text);
    },
  );
}
