import helmet from '@fastify/helmet';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { destinationSchemas } from './schemas/destinations.js';
import { recordSchemas } from './schemas/records.js';
import { errorBody } from './schemas/responses.js';

export const VERSION = '0.1.0';

/**
 * The policy of every page and file under /docs: the page's own scripts and styles only (no inline
 * code, nothing from elsewhere), images from the page or data: URLs, requests to this service only.
 */
const DOCS_CSP = [
  "default-src 'self'",
  "base-uri 'self'",
  "script-src 'self'",
  "script-src-attr 'none'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

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
          'Collects tracker payloads (Tracardi-compatible), resolves profiles and sessions, and stores events. ' +
          'To try the examples in order: "Authorize" with the management token, create the event source `demo` ' +
          '(POST /event-source), then send events (POST /track). The reference is docs/api.md.',
      },
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } },
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  await app.register(async (docs) => {
    // Headers of the pages (no CORS, no framing); the policy is set below, on every file of /docs.
    await docs.register(helmet, { contentSecurityPolicy: false });
    await docs.register(swaggerUi, {
      routePrefix: '/docs',
      staticCSP: DOCS_CSP,
      theme: { title: 'Event collector API' },
      // Without Swagger UI's top bar: its logo is an SVG with an inline <style>, which the policy
      // above refuses (and the bar's other use, opening another document, has no use here).
      uiConfig: { layout: 'BaseLayout', displayRequestDuration: true, persistAuthorization: true },
    });
  });
}
