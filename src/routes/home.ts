import type { FastifyInstance } from 'fastify';
import { VERSION } from '../http/docs.js';
import { errorResponses } from '../http/schemas/responses.js';

const LINKS = {
  console: '/console/',
  docs: '/docs',
  openapi: '/docs/json',
  health: '/health',
  tracker: '/tracker.js',
  demo: '/demo',
};

/** `GET /`: browsers are sent to the console; other clients get an index of the service's addresses. */
export default async function homeRoutes(app: FastifyInstance) {
  app.get(
    '/',
    {
      schema: {
        tags: ['service'],
        summary: 'Where things are: the console, the documentation, health',
        description:
          'A client that accepts `text/html` (a browser) is redirected to the console (302); any other gets this index.',
        response: {
          200: {
            description: 'The index of the service',
            type: 'object',
            properties: {
              name: { type: 'string' },
              version: { type: 'string' },
              links: {
                type: 'object',
                properties: Object.fromEntries(Object.keys(LINKS).map((k) => [k, { type: 'string' }])),
              },
            },
            examples: [{ name: 'event-collector', version: VERSION, links: LINKS }],
          },
          302: { description: 'A browser: to the console', type: 'null' },
          ...errorResponses(),
        },
      },
    },
    async (request, reply) => {
      if (/\btext\/html\b/.test(request.headers.accept ?? '')) return reply.redirect('/console/');
      return { name: 'event-collector', version: VERSION, links: LINKS };
    },
  );
}
