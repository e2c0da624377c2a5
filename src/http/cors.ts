import type { FastifyInstance } from 'fastify';

const ALLOWED_HEADERS = 'content-type, content-encoding, x-timestamp';

/**
 * CORS for the public tracking endpoints only (docs/api.md#conventions): any origin, and preflight answers for
 * the given paths. Registered inside the tracking plugin, so management routes send no CORS headers.
 */
export function trackingCors(app: FastifyInstance, paths: string[]): void {
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('access-control-allow-origin', '*');
  });
  for (const url of paths) {
    app.options(url, { schema: { hide: true } }, async (_request, reply) => {
      return reply
        .code(204)
        .header('access-control-allow-methods', 'POST, OPTIONS')
        .header('access-control-allow-headers', ALLOWED_HEADERS)
        .header('access-control-max-age', '86400')
        .send();
    });
  }
}
