/**
 * The bare server of the benchmarks: Fastify 5 parsing the body as the service does and answering a
 * /track-shaped response with the body's ids (or random UUIDs). With `store`, each request is also
 * handed to it with its raw body and answered once it resolves (the floor server, bench/floor-server.ts).
 */
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';

interface Body {
  profile?: { id?: unknown } | null;
  session?: { id?: unknown } | null;
}

/** The raw body, kept on the request for `store`. */
interface Raw {
  text: string;
}

export type Store = (sessionId: string, text: string) => Promise<unknown>;

export function bareApp(store?: Store): FastifyInstance {
  const app = Fastify({ logger: false, bodyLimit: 1_048_576 });

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (request, text, done) => {
    try {
      const body: unknown = JSON.parse(text as string);
      if (store) (request as unknown as Raw).text = text as string;
      done(null, body);
    } catch (error) {
      done(error as Error, undefined);
    }
  });

  app.post('/track', async (request) => {
    const body = (request.body ?? {}) as Body;
    const profileId = typeof body.profile?.id === 'string' ? body.profile.id : randomUUID();
    const sessionId = typeof body.session?.id === 'string' ? body.session.id : randomUUID();
    if (store) await store(sessionId, (request as unknown as Raw).text);
    return {
      profile: { id: profileId },
      session: { id: sessionId },
      source: { consent: false },
      ux: [],
      response: {},
    };
  });
  return app;
}

/** Listens on env PORT and HOST, prints `ready <port>`, and closes on SIGTERM or SIGINT. */
export async function serve(app: FastifyInstance, defaultPort: number): Promise<void> {
  const port = Number(process.env.PORT ?? defaultPort);
  const host = process.env.HOST ?? '127.0.0.1';
  await app.listen({ port, host });
  console.log(`ready ${port}`);
  const stop = () => {
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
