/**
 * The ceiling for our stack: Fastify 5 parsing the same body as the service and answering a
 * /track-shaped response without doing any work. Started by bench/run.ts as a child process
 * (`node --import tsx bench/bare-server.ts`, env PORT and HOST); prints `ready <port>` once listening.
 */
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';

interface Body {
  profile?: { id?: unknown } | null;
  session?: { id?: unknown } | null;
}

const app = Fastify({ logger: false, bodyLimit: 1_048_576 });

app.removeAllContentTypeParsers();
app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => {
  try {
    done(null, JSON.parse(body as string));
  } catch (error) {
    done(error as Error, undefined);
  }
});

app.post('/track', async (request) => {
  const body = (request.body ?? {}) as Body;
  const profileId = typeof body.profile?.id === 'string' ? body.profile.id : randomUUID();
  const sessionId = typeof body.session?.id === 'string' ? body.session.id : randomUUID();
  return {
    profile: { id: profileId },
    session: { id: sessionId },
    source: { consent: false },
    ux: [],
    response: {},
  };
});

const port = Number(process.env.PORT ?? 8687);
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
