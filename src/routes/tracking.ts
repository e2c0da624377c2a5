import type { FastifyInstance } from 'fastify';
import { trackingCors } from '../http/cors.js';
import type { RouteOptions } from '../services.js';
import collectRoutes from './collect.js';
import trackRoutes from './track.js';

/** The public collection endpoints: open (the source id is their check) and CORS-enabled. */
export default async function trackingRoutes(app: FastifyInstance, options: RouteOptions) {
  trackingCors(app, ['/track', '/collect/:event_type/:source_id']);
  await app.register(trackRoutes, options);
  await app.register(collectRoutes, options);
}
