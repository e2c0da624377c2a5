/**
 * The floor of a durable collector on our stack: the bare server (bench/bare-app.ts) that also stores
 * each request body before answering. Bodies are group-committed by the service's own GroupCommitter
 * to a writer thread (bench/floor-writer.mjs) that appends them to one SQLite table with the service's
 * connection settings; with FLOOR_INDEX=session the table has a unique index on the session id
 * besides. No pipeline, no records, no other table or index. Env PORT, HOST, FLOOR_FILE (a database
 * file that does not exist yet), FLOOR_CHECKPOINT (`service`, the default: the service's checkpointer
 * thread; `sqlite`: SQLite's own, every 1,000 pages in the writer thread). Prints `ready <port>` once
 * listening. Started by bench/floor.ts, after `npm run build` (the writer loads the compiled store).
 */
import { Worker } from 'node:worker_threads';
import { GroupCommitter } from '../src/storage/group-commit.js';
import { bareApp, serve } from './bare-app.js';

type Row = [sessionId: string, body: string];

const file = process.env.FLOOR_FILE;
if (!file) throw new Error('FLOOR_FILE is not set');
const checkpoint = process.env.FLOOR_CHECKPOINT ?? 'service';
if (checkpoint !== 'service' && checkpoint !== 'sqlite')
  throw new Error('FLOOR_CHECKPOINT: service or sqlite');
const writer = new Worker(new URL('./floor-writer.mjs', import.meta.url), {
  workerData: { file, index: process.env.FLOOR_INDEX === 'session', checkpoint },
});
await new Promise((ready, fail) => {
  writer.once('message', ready);
  writer.once('error', fail);
});
// Requests waiting on a writer that is gone would never be answered: end the server instead.
writer.on('error', (error) => {
  console.error(`the writer thread failed: ${error.message}`);
  process.exit(1);
});
writer.on('exit', (code) => {
  console.error(`the writer thread stopped (exit code ${code})`);
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

await serve(
  bareApp((sessionId, text) => committer.submit([sessionId, text])),
  8688,
);
