import type { FastifyInstance } from 'fastify';
import { errors } from './errors.js';

/**
 * Once the app starts closing, requests that still arrive on open connections are answered 503 with
 * `Retry-After` and `Connection: close` (docs/api.md#shutdown), before any other work.
 */
export function refuseWhileClosing(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', (_request, reply, done) => {
    if (!closing) return done();
    const error = errors.shuttingDown();
    void reply.code(error.statusCode).headers(error.headers).send(error.body());
  });
}
