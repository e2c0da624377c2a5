import type { FastifyInstance } from 'fastify';

const ALLOWED_HEADERS = 'content-type, x-timestamp';

/**
 * CORS for the public tracking endpoints only (contract §2): any origin, and preflight answers for
 * the given paths. Registered inside the tracking plugin, so management routes send no CORS headers.
 */
export function trackingCors(app: FastifyInstance, paths: string[]): void {
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('access-control-allow-origin', '*');
  });
  for (const url of paths) {
    app.options(url, { schema: { hide: true } }, async (request, reply) => {
      const requested = request.headers['access-control-request-headers'];
      const headers =
        typeof requested === 'string' && requested ? `${ALLOWED_HEADERS}, ${requested}` : ALLOWED_HEADERS;
      return reply
        .code(204)
        .header('access-control-allow-methods', 'POST, OPTIONS')
        .header('access-control-allow-headers', headers)
        .header('access-control-max-age', '86400')
        .send();
    });
  }
}
