import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import helmet from '@fastify/helmet';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RouteOptions } from '../services.js';

export interface WebOptions extends Partial<RouteOptions> {
  /** Folder of the built browser assets; by default dist/public of this package (`npm run build`). */
  publicDir?: string;
}

/** dist/public of the package, from src/routes (tsx) as from dist/routes (the build). */
const DEFAULT_PUBLIC_DIR = fileURLToPath(new URL('../../dist/public/', import.meta.url));
const NOT_BUILT = 'The browser assets are not built: run `npm run build` (it writes dist/public).';
const JS = 'text/javascript; charset=utf-8';

/** A built file read into memory, read again when it changes on disk; null while it does not exist. */
class Asset {
  private cached: { mtimeMs: number; size: number; body: Buffer; etag: string } | null = null;

  constructor(readonly path: string) {}

  get(): { body: Buffer; etag: string } | null {
    let stat;
    try {
      stat = statSync(this.path);
    } catch {
      this.cached = null;
      return null;
    }
    if (!this.cached || this.cached.mtimeMs !== stat.mtimeMs || this.cached.size !== stat.size) {
      const body = readFileSync(this.path);
      const etag = `"${createHash('sha1').update(body).digest('base64url').slice(0, 20)}"`;
      this.cached = { mtimeMs: stat.mtimeMs, size: stat.size, body, etag };
    }
    return this.cached;
  }
}

function notBuilt(reply: FastifyReply): FastifyReply {
  return reply.code(503).header('cache-control', 'no-store').send({ detail: NOT_BUILT });
}

/** Sends a built file with a validator; 304 when the client has it, 503 when it is not built. */
function sendAsset(
  request: FastifyRequest,
  reply: FastifyReply,
  asset: Asset,
  type: string,
  cacheControl: string,
): FastifyReply {
  const file = asset.get();
  if (!file) return notBuilt(reply);
  reply.header('content-type', type).header('cache-control', cacheControl).header('etag', file.etag);
  if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
  return reply.send(file.body);
}

function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );
}

/**
 * The browser side: the tracker script (/tracker.js), a demo page (/demo) and the web console
 * (/console/), all built into dist/public by `npm run build`.
 */
export default async function webRoutes(app: FastifyInstance, options: WebOptions) {
  const publicDir = options.publicDir ?? DEFAULT_PUBLIC_DIR;
  const tracker = new Asset(join(publicDir, 'tracker.js'));

  // Embedded in any site: cross-origin loads allowed, no page security headers, a short cache.
  app.get(
    '/tracker.js',
    {
      schema: { hide: true },
    },
    async (request, reply) => {
      reply
        .header('access-control-allow-origin', '*')
        .header('cross-origin-resource-policy', 'cross-origin')
        .header('x-content-type-options', 'nosniff');
      return sendAsset(request, reply, tracker, JS, 'public, max-age=300');
    },
  );

  // Pages of this service: security headers, in their own context so the tracking routes do not pay for them.
  await app.register(async (pages) => {
    await pages.register(helmet, {
      contentSecurityPolicy: {
        useDefaults: false,
        directives: {
          defaultSrc: ["'self'"],
          scriptSrc: ["'self'"],
          styleSrc: ["'self'"],
          imgSrc: ["'self'", 'data:'],
          connectSrc: ["'self'"],
          fontSrc: ["'self'"],
          objectSrc: ["'none'"],
          baseUri: ["'self'"],
          formAction: ["'self'"],
          frameAncestors: ["'none'"],
        },
      },
    });

    const demoPage = new Asset(join(publicDir, 'demo.html'));
    const demoScript = new Asset(join(publicDir, 'demo.js'));
    const demoStyle = new Asset(join(publicDir, 'demo.css'));

    pages.get<{ Querystring: { source: string } }>(
      '/demo',
      {
        schema: {
          // Pages of this service are not part of the API documentation.
          hide: true,
          querystring: {
            type: 'object',
            properties: { source: { type: 'string', minLength: 1, maxLength: 128, default: 'demo' } },
          },
        },
      },
      async (request, reply) => {
        const file = demoPage.get();
        if (!file) return notBuilt(reply);
        const html = file.body.toString('utf8').replaceAll('__SOURCE__', escapeHtml(request.query.source));
        return reply
          .header('content-type', 'text/html; charset=utf-8')
          .header('cache-control', 'no-store')
          .send(html);
      },
    );
    pages.get('/demo.js', { schema: { hide: true } }, async (request, reply) =>
      sendAsset(request, reply, demoScript, JS, 'no-cache'),
    );
    pages.get('/demo.css', { schema: { hide: true } }, async (request, reply) =>
      sendAsset(request, reply, demoStyle, 'text/css; charset=utf-8', 'no-cache'),
    );

    const consoleDir = join(publicDir, 'console');
    // The console's address: redirected to its index (served by @fastify/static below).
    pages.get('/console', { schema: { hide: true } }, async (_request, reply) =>
      existsSync(join(consoleDir, 'index.html')) ? reply.redirect('/console/') : notBuilt(reply),
    );
    if (existsSync(join(consoleDir, 'index.html'))) {
      await pages.register(fastifyStatic, {
        root: consoleDir,
        prefix: '/console/',
        decorateReply: false,
        cacheControl: false,
        setHeaders(reply, path) {
          // Built assets have content hashes in their names; index.html must be revalidated.
          reply.header(
            'cache-control',
            path.includes(join('console', 'assets')) ? 'public, max-age=31536000, immutable' : 'no-cache',
          );
        },
      });
    } else {
      pages.get('/console/*', { schema: { hide: true } }, async (_request, reply) => notBuilt(reply));
    }
  });
}
