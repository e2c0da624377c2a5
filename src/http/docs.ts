import helmet from '@fastify/helmet';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { destinationSchemas } from './schemas/destinations.js';
import { recordSchemas } from './schemas/records.js';
import { errorBody } from './schemas/responses.js';

export const VERSION = '0.1.0';

/**
 * The OpenAPI document (/docs/json) built from every route's schemas, and the interactive
 * documentation (/docs) with its own security headers: the tracking path does not pay for them.
 */
export async function registerDocs(app: FastifyInstance): Promise<void> {
  for (const schema of [errorBody, ...recordSchemas, ...destinationSchemas]) app.addSchema(schema);
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
}
