import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import helmet from '@fastify/helmet';
import swaggerUi from '@fastify/swagger-ui';
import { Ajv } from 'ajv';
import Fastify, {
  LogController,
  type FastifyInstance,
  type FastifyReply,
  type FastifyServerOptions,
} from 'fastify';
import { KeyedLock } from './domain/keyed-lock.js';
import { CursorCodec } from './domain/paging.js';
import { timeOrderedId } from './domain/ids.js';
import { Quarantine } from './domain/quarantine.js';
import { SourceRateLimiter } from './domain/rate-limit.js';
import { SourceCache } from './domain/sources.js';
import { EventValidator } from './domain/validation/validator.js';
import { errors, HttpError } from './errors.js';
import { errorHandler } from './http/error-handler.js';
import { registerJsonBody } from './http/json-body.js';
import {
  errorBody,
  eventRecord,
  eventSource,
  eventTypeRecord,
  profileRecord,
  rejectedRecord,
  sessionRecord,
} from './http/schemas.js';
import { Metrics } from './metrics.js';
import healthRoutes from './routes/health.js';
import managementRoutes from './routes/management.js';
import trackingRoutes from './routes/tracking.js';
import webRoutes from './routes/web.js';
import type { AppConfig, Services } from './services.js';
import { createStore } from './storage/index.js';
import type { Store } from './storage/store.js';

export interface BuildOptions {
  config: AppConfig;
  /** The store to use; by default the one the configuration selects. It is opened here and closed with the app. */
  store?: Store;
  logger?: FastifyServerOptions['logger'];
}

const VERSION = '0.1.0';

/** Builds the whole service from configuration, without listening (tests call it directly). */
export async function buildApp(options: BuildOptions): Promise<FastifyInstance> {
  const { config } = options;
  const store = options.store ?? createStore(config);
  await store.open();

  const app = Fastify({
    logger: options.logger ?? { level: config.logLevel },
    bodyLimit: config.bodyLimit,
    logController: new LogController({ disableRequestLogging: !config.accessLog }),
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    return503OnClosing: true,
    // Path parameters always reach their route, whose schema refuses what is too long (422).
    routerOptions: { maxParamLength: 4096 },
    // Errors Node's HTTP parser raises before a request exists (headers too large, malformed request).
    clientErrorHandler: (error: NodeJS.ErrnoException, socket) => {
      const [status, detail] =
        error.code === 'HPE_HEADER_OVERFLOW'
          ? [431, 'Request headers are too large']
          : [400, 'Malformed HTTP request'];
      const body = JSON.stringify({ detail });
      if (socket.writable) {
        socket.end(
          `HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
            `content-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
            `connection: close\r\n\r\n${body}`,
        );
      } else socket.destroy(error);
    },
    frameworkErrors: (error, _request, reply) => {
      const http =
        error.code === 'FST_ERR_BAD_URL'
          ? new HttpError(400, 'Malformed URL')
          : new HttpError(400, error.message);
      return (reply as FastifyReply).code(http.statusCode).send(http.body());
    },
  });

  // Bodies are validated strictly (a string is not a boolean); query strings and paths are coerced.
  const bodyAjv = new Ajv({ coerceTypes: false, useDefaults: true, allErrors: false, strict: false });
  const paramAjv = new Ajv({ coerceTypes: 'array', useDefaults: true, allErrors: false, strict: false });
  app.setValidatorCompiler(({ schema, httpPart }) =>
    (httpPart === 'body' ? bodyAjv : paramAjv).compile(schema),
  );
  registerJsonBody(app, config.maxDepth);
  app.setErrorHandler(errorHandler(config.bodyLimit));
  app.setNotFoundHandler((request, reply) => {
    const error = errors.routeNotFound(request.method, request.url.slice(0, 200));
    return reply.code(404).send(error.body());
  });
  app.addHook('onClose', async () => store.close());

  const shared = [
    errorBody,
    eventSource,
    eventRecord,
    sessionRecord,
    profileRecord,
    eventTypeRecord,
    rejectedRecord,
  ];
  for (const schema of shared) app.addSchema(schema);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Event tracking collector',
        version: VERSION,
        description:
          'Collects tracker payloads (Tracardi-compatible), resolves profiles and sessions, and stores events.',
      },
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } },
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  // The documentation pages get security headers; the tracking hot path does not pay for them.
  await app.register(async (docs) => {
    await docs.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });
    await docs.register(helmet, (instance) => {
      const csp = (instance as unknown as { swaggerCSP: { script: string[]; style: string[] } }).swaggerCSP;
      return {
        contentSecurityPolicy: {
          directives: {
            defaultSrc: ["'self'"],
            imgSrc: ["'self'", 'data:'],
            scriptSrc: ["'self'", ...csp.script],
            styleSrc: ["'self'", ...csp.style],
            formAction: ["'self'"],
            frameAncestors: ["'none'"],
          },
        },
      };
    });
  });

  const clock = () => new Date();
  const services: Services = {
    config,
    store,
    sources: new SourceCache(store, config.sourceTtlSec),
    locks: new KeyedLock(),
    validator: new EventValidator(store, config.validatorTtlSec),
    quarantine: new Quarantine(
      store,
      { maxAgeDays: config.rejectedMaxAgeDays, maxCount: config.rejectedMaxCount },
      clock,
      () => timeOrderedId(),
    ),
    limiter: new SourceRateLimiter(config.rateLimit),
    observer: new Metrics(store),
    cursors: new CursorCodec(config.apiToken),
    clock,
    newId: () => timeOrderedId(),
  };
  // Sources and schemas changed by other processes on the same database are forgotten at once.
  const unwatch = store.watchChanges?.(({ kind, id }) => {
    const cache = kind === 'source' ? services.sources : services.validator;
    if (id === null) cache.clear();
    else cache.invalidate(id);
  });
  if (unwatch) app.addHook('onClose', async () => unwatch());
  services.observer.register(app);
  await app.register(healthRoutes, { services });
  await app.register(trackingRoutes, { services });
  await app.register(managementRoutes, { services });
  await app.register(webRoutes, { services });
  return app;
}
