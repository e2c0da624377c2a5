/**
 * The writer thread of the embedded store (started by writer-thread.ts): the one connection that
 * writes, and that also answers the session and profile reads of /track. It runs each request it
 * receives to the end, in the order received, and answers with the result (for a write, once its
 * transaction has committed). SQLite's work happens here, beside the thread that parses and answers
 * HTTP requests, never on it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { Checkpointer } from './checkpointer.js';
import { errorShape } from './errors.js';
import type { WriterData, WriterReply, WriterRequest } from './writer-protocol.js';
import { configureWriter, migrate, WAL_LIMIT_BYTES } from './connection.js';
import { HOLD_MS } from './held-profiles.js';
import { prepareWrites, type WriteOps } from './writes.js';
import { lowerThreadPriority, WRITER_NICENESS } from './thread-priority.js';

const { file, sync, hold } = workerData as WriterData;
const port = parentPort!;
// Before the checkpointer's thread starts, which takes this priority too (thread-priority.ts).
lowerThreadPriority(WRITER_NICENESS);

let db: Database.Database;
let ops: WriteOps;
let checkpointer: Checkpointer;
let flushing: NodeJS.Timeout | undefined;
try {
  db = new Database(file);
  configureWriter(db, sync);
  migrate(db);
  ops = prepareWrites(db, hold);
  // Held profiles are written once due even when no commit comes to do it.
  flushing = setInterval(() => {
    try {
      ops.flushProfiles(false);
    } catch {
      // Busy or failing: the next commit or turn of the timer tries again.
    }
  }, HOLD_MS).unref();
  checkpointer = new Checkpointer(file, WAL_LIMIT_BYTES, {
    // Without its thread, this connection copies the log itself after commits, as SQLite does.
    onStopped: () => db.pragma('wal_autocheckpoint = 1000'),
  });
  port.postMessage({ ready: true } satisfies WriterReply);
} catch (error) {
  port.postMessage({ ready: false, error: errorShape(error) } satisfies WriterReply);
  process.exit(1);
}

port.on('message', (request: WriterRequest) => {
  if (request.op === 'close') {
    void close(request.id);
    return;
  }
  let reply: WriterReply;
  try {
    const operation = ops[request.op] as (...args: unknown[]) => unknown;
    reply = { id: request.id, ok: true, value: operation(...request.args) };
  } catch (error) {
    reply = { id: request.id, ok: false, error: errorShape(error) };
  }
  port.postMessage(reply);
  if (request.op === 'commit') {
    const mode = checkpointer.due();
    try {
      if (mode) db.pragma(`wal_checkpoint(${mode})`);
    } catch {
      // Busy: the checkpointer reports again after its next pass.
    }
  }
});

async function close(id: number): Promise<void> {
  clearInterval(flushing);
  try {
    ops.flushProfiles(true);
  } catch {
    // They stay in the log, written when the store opens next.
  }
  await checkpointer.close();
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
  } catch {
    // Another connection still reads: the log is checkpointed by the next opener instead.
  }
  db.close();
  port.postMessage({ id, ok: true, value: undefined } satisfies WriterReply);
  port.close();
}
