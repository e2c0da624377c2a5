import { Ajv } from 'ajv';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { registerDocs } from './http/docs.js';
import { errors } from './http/errors.js';
import { errorHandler } from './http/error-handler.js';
import { registerContentEncoding } from './http/content-encoding.js';
import { registerJsonBody } from './http/json-body.js';
import { serverOptions } from './http/server-options.js';
import { refuseWhileClosing } from './http/shutdown.js';
import healthRoutes from './routes/health.js';
import homeRoutes from './routes/home.js';
import managementRoutes from './routes/management.js';
import trackingRoutes from './routes/tracking.js';
import webRoutes from './routes/web.js';
import { parseTime } from './model/time.js';
import { EventRetention } from './domain/retention.js';
import { buildServices, type AppConfig, type Services } from './services.js';
import { createStore } from './storage/index.js';
import type { Store } from './storage/store.js';

export interface BuildOptions {
  config: AppConfig;
  /** The store to use; by default the one the configuration selects. It is opened here and closed with the app. */
  store?: Store;
  logger?: FastifyServerOptions['logger'];
}

/** Builds the whole service from configuration, without listening (tests call it directly). */
export async function buildApp(options: BuildOptions): Promise<FastifyInstance> {
  const { config } = options;
  const store = options.store ?? createStore(config);
  await store.open();

  const app = Fastify(serverOptions(config, options.logger));
  app.server.maxConnections = config.maxConnections;
  refuseWhileClosing(app);
  // Bodies are validated strictly (a string is not a boolean); query strings and paths are coerced.
  const bodyAjv = new Ajv({ coerceTypes: false, useDefaults: true, allErrors: false, strict: false });
  const paramAjv = new Ajv({ coerceTypes: 'array', useDefaults: true, allErrors: false, strict: false });
  // `date-time` is an RFC 3339 time with an offset, read the way the pipeline reads it.
  for (const ajv of [bodyAjv, paramAjv]) {
    ajv.addFormat('date-time', { type: 'string', validate: (text: string) => parseTime(text) !== null });
  }
  app.setValidatorCompiler(({ schema, httpPart }) =>
    (httpPart === 'body' ? bodyAjv : paramAjv).compile(schema),
  );
  registerContentEncoding(app);
  registerJsonBody(app, config.maxDepth);
  app.setErrorHandler(errorHandler(config.bodyLimit));
  app.setNotFoundHandler((request, reply) => {
    const error = errors.routeNotFound(request.method, request.url.slice(0, 200));
    return reply.code(404).send(error.body());
  });
  await registerDocs(app);

  const services = buildServices(config, store, app.log);
  // Delivery stops first (a batch being sent may finish), then the store closes.
  app.addHook('onClose', async () => {
    await services.deliveries.stop();
    services.sender.close();
    await store.close();
  });
  // Sources, schemas and rules changed by other processes on the same database are forgotten at once.
  const caches = { source: services.sources, event_type: services.validator, profile_rule: services.rules };
  const unwatch = store.watchChanges?.(({ kind, id }) => {
    if (kind === 'destination') return services.deliveries.changed(id);
    const cache = caches[kind];
    if (id === null) cache.clear();
    else cache.invalidate(id);
  });
  if (unwatch) app.addHook('onClose', async () => unwatch());
  services.observer.register(app);
  startRetention(app, services);
  await app.register(homeRoutes);
  await app.register(healthRoutes, { services });
  await app.register(trackingRoutes, { services });
  await app.register(managementRoutes, { services });
  await app.register(webRoutes, { services });
  app.addHook('onReady', async () => services.deliveries.start());
  return app;
}

/** TRACK_EVENT_RETENTION_DAYS: deletes old events in the background while the app is open. */
function startRetention(app: FastifyInstance, services: Services): void {
  const days = services.config.eventRetentionDays;
  if (days === null) return;
  const retention = new EventRetention(services.store, { days }, services.clock, {
    deleted: (count) => services.observer.eventsExpired(count),
    failed: (error) => app.log.warn({ err: error }, 'event retention: a pass failed; retrying later'),
  });
  app.addHook('onReady', async () => retention.start());
  // Before the store closes (hooks run in reverse order of registration).
  app.addHook('onClose', async () => retention.stop());
}
