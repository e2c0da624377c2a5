/**
 * The floor of a durable collector on PostgreSQL: the bare server (bench/bare-app.ts) that also stores
 * each request body before answering. Bodies are group-committed by the service's own GroupCommitter;
 * each batch is one INSERT of all its rows (array parameters, one round trip, one transaction) into
 * one table, `synchronous_commit` on. With FLOOR_INDEX=session the table has a unique index on the
 * session id besides. No pipeline, no records, no other table or index. Env PORT, HOST,
 * FLOOR_DATABASE_URL, FLOOR_TABLE (created afresh), FLOOR_IN_FLIGHT (batches committing at once,
 * each on its own connection; 1 by default, as the service). Prints `ready <port>` once listening.
 * Started by bench/floor.ts (`--store postgres`).
 */
import pg from 'pg';
import { GroupCommitter } from '../src/storage/group-commit.js';
import { bareApp, serve } from './bare-app.js';

type Row = [sessionId: string, body: string];

const url = process.env.FLOOR_DATABASE_URL;
const table = process.env.FLOOR_TABLE;
if (!url || !table || !/^[a-z_]+$/.test(table))
  throw new Error('FLOOR_DATABASE_URL and FLOOR_TABLE are needed');
const inFlight = Number(process.env.FLOOR_IN_FLIGHT ?? 1);

const pool = new pg.Pool({ connectionString: url, max: inFlight, application_name: 'collector-floor' });
await pool.query(`DROP TABLE IF EXISTS ${table}`);
await pool.query(
  `CREATE TABLE ${table} (seq bigserial PRIMARY KEY, session_id text NOT NULL, body text NOT NULL)`,
);
if (process.env.FLOOR_INDEX === 'session') await pool.query(`CREATE UNIQUE INDEX ON ${table} (session_id)`);
// Durable whatever the server's default: each answer waits for the commit's WAL flush.
pool.on('connect', (client) => void client.query('SET synchronous_commit = on'));
const insert = `INSERT INTO ${table} (session_id, body) SELECT * FROM unnest($1::text[], $2::text[]) RETURNING seq`;

const committer = new GroupCommitter<Row, number>(
  async (rows) => {
    const { rows: stored } = await pool.query<{ seq: string }>(insert, [
      rows.map((r) => r[0]),
      rows.map((r) => r[1]),
    ]);
    return stored.map((r) => ({ ok: true, value: Number(r.seq) }));
  },
  10_000,
  { maxInFlight: inFlight },
);

await serve(
  bareApp((sessionId, text) => committer.submit([sessionId, text])),
  8689,
);
