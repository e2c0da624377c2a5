import type { FastifyInstance } from 'fastify';
import { bearerAuth } from '../http/auth.js';
import type { RouteOptions } from '../services.js';
import eventSourceRoutes from './event-sources.js';
import recordRoutes from './records.js';

/** Everything behind the management token (contract §7). */
export default async function managementRoutes(app: FastifyInstance, options: RouteOptions) {
  app.addHook('onRequest', bearerAuth(options.services.config.apiToken));
  await app.register(eventSourceRoutes, options);
  await app.register(recordRoutes, options);
}
