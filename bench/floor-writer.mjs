// The writer thread of bench/floor-server.ts: appends each batch of request bodies to one table in
// one transaction and answers each batch with the row ids once committed. The connection has the
// service's settings (compiled from src/storage/sqlite, as the service under test runs from dist:
// `npm run build` first) and, unless `workerData.checkpoint` is `sqlite`, the service's
// checkpointer thread, so that the floor differs from the service only in what it writes. With
// `workerData.index`, the table has a unique index on the session id besides, as a store that finds
// a session by the client's id must.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { Checkpointer } from '../dist/storage/sqlite/checkpointer.js';
import { configureWriter, WAL_LIMIT_BYTES } from '../dist/storage/sqlite/connection.js';

const db = new Database(workerData.file);
configureWriter(db, 'normal');
db.exec('CREATE TABLE visits (seq INTEGER PRIMARY KEY, session_id TEXT NOT NULL, body TEXT NOT NULL)');
if (workerData.index) db.exec('CREATE UNIQUE INDEX visits_session ON visits (session_id)');
// SQLite's own checkpointing: every 1,000 pages, in this thread.
const autocheckpoint = () => db.pragma('wal_autocheckpoint = 1000');
let checkpointer = null;
if (workerData.checkpoint === 'sqlite') autocheckpoint();
// As the service's writer: if the checkpointer thread stops, this connection checkpoints itself.
else checkpointer = new Checkpointer(workerData.file, WAL_LIMIT_BYTES, { onStopped: autocheckpoint });
const insert = db.prepare('INSERT INTO visits (session_id, body) VALUES (?, ?)');
const commit = db.transaction((rows) =>
  rows.map(([sessionId, body]) => insert.run(sessionId, body).lastInsertRowid),
).immediate;

parentPort.on('message', ({ id, rows }) => {
  parentPort.postMessage({ id, seqs: commit(rows) });
  const mode = checkpointer?.due();
  try {
    if (mode) db.pragma(`wal_checkpoint(${mode})`);
  } catch {
    // Busy: the checkpointer reports again after its next pass.
  }
});
parentPort.postMessage({ ready: true });
