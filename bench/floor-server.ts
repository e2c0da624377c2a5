/**
 * The floor of a durable collector on our stack: the bare server (bench/bare-server.ts) that also
 * stores each request body before answering. Bodies are group-committed by the service's own
 * GroupCommitter to a writer thread (bench/floor-writer.mjs) that appends them to one SQLite table
 * with the service's connection settings and checkpointing; with FLOOR_INDEX=session the table has a
 * unique index on the session id besides. No pipeline, no records, no other table or index.
 * Env PORT, HOST, FLOOR_FILE (a database file that does not exist yet); prints `ready <port>` once
 * listening. Started by bench/floor.ts, after `npm run build` (the writer loads the compiled store).
 */
import { randomUUID } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import Fastify from 'fastify';
import { GroupCommitter } from '../src/storage/group-commit.js';

type Row = [sessionId: string, body: string];

const file = process.env.FLOOR_FILE;
if (!file) throw new Error('FLOOR_FILE is not set');
const writer = new Worker(new URL('./floor-writer.mjs', import.meta.url), {
  workerData: { file, index: process.env.FLOOR_INDEX === 'session' },
});
await new Promise((ready, fail) => {
  writer.once('message', ready);
  writer.once('error', fail);
});
writer.on('error', (error) => {
  console.error(`the writer thread failed: ${error.message}`);
  process.exit(1);
});

const waiting = new Map<number, (seqs: number[]) => void>();
let nextId = 1;
writer.on('message', ({ id, seqs }: { id: number; seqs: number[] }) => {
  waiting.get(id)?.(seqs);
  waiting.delete(id);
});
// As the service: the next batch is handed over while the previous one commits.
const committer = new GroupCommitter<Row, number>(
  (rows) =>
    new Promise((resolve) => {
      const id = nextId++;
      waiting.set(id, (seqs) => resolve(seqs.map((value) => ({ ok: true, value }))));
      writer.postMessage({ id, rows });
    }),
  10_000,
  { maxInFlight: 2 },
);

interface Body {
  profile?: { id?: unknown } | null;
  session?: { id?: unknown } | null;
}

const app = Fastify({ logger: false, bodyLimit: 1_048_576 });

app.removeAllContentTypeParsers();
app.addContentTypeParser('*', { parseAs: 'string' }, (_request, text, done) => {
  try {
    done(null, { body: JSON.parse(text as string) as Body, text });
  } catch (error) {
    done(error as Error, undefined);
  }
});

app.post('/track', async (request) => {
  const { body, text } = request.body as { body: Body; text: string };
  const profileId = typeof body.profile?.id === 'string' ? body.profile.id : randomUUID();
  const sessionId = typeof body.session?.id === 'string' ? body.session.id : randomUUID();
  await committer.submit([sessionId, text]);
  return {
    profile: { id: profileId },
    session: { id: sessionId },
    source: { consent: false },
    ux: [],
    response: {},
  };
});

const port = Number(process.env.PORT ?? 8688);
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
