import type { FastifyInstance } from 'fastify';
import { bearerAuth } from '../http/auth.js';
import type { RouteOptions } from '../services.js';
import destinationRoutes from './destinations.js';
import eventManagementRoutes from './event-management.js';
import eventSourceRoutes from './event-sources.js';
import eventStatsRoutes from './event-stats.js';
import recordRoutes from './records.js';
import metricsRoutes from './metrics.js';
import profileRuleRoutes from './profile-rules.js';
import profileRoutes from './profiles.js';
import rejectedRoutes from './rejected.js';

/** Everything behind the management token (docs/api.md#authentication). */
export default async function managementRoutes(app: FastifyInstance, options: RouteOptions) {
  app.addHook('onRequest', bearerAuth(options.services.config.apiToken));
  // Documented as needing the token, so that "Try it out" in /docs sends it.
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, security: [{ bearerAuth: [] }] };
  });
  await app.register(eventSourceRoutes, options);
  await app.register(recordRoutes, options);
  await app.register(eventStatsRoutes, options);
  await app.register(profileRoutes, options);
  await app.register(profileRuleRoutes, options);
  await app.register(eventManagementRoutes, options);
  await app.register(rejectedRoutes, options);
  await app.register(destinationRoutes, options);
  await app.register(metricsRoutes, { metrics: options.services.observer });
}
