/**
 * `npm run bench:floor`: how fast a durable collector can be on this stack and machine, step by step.
 * Drives each of these servers in turn, with the 1-event load of `npm run bench`:
 *   bare            the bare server (bench/bare-server.ts): parse and answer, nothing stored
 *   append          the bare server plus a group-committed append of each body to one SQLite table
 *   append + index  the same with a unique index on the session id (the client's random ids)
 *   … ordered ids   the same, driven with time-ordered session ids instead
 *   service         the collector (embedded store, fresh data folder)
 *   … ordered ids   a second collector, driven with time-ordered session ids
 * With `--store postgres` (DATABASE_URL, else a throwaway embedded PostgreSQL), the servers are:
 *   bare            as above
 *   pg append       the bare server plus a group-committed append of each body to one PostgreSQL
 *                   table (bench/floor-pg-server.ts), synchronous_commit on
 *   … + index       the same with a unique index on the session id
 *   … 2 in flight   the same, two batches committing at once on two connections
 *   service         the collector on that PostgreSQL, first visits
 *   … returning     the same collector, returning visitors (the returning-visitor scenario's body)
 * and the PostgreSQL server's CPU per request is measured beside the server's.
 * The order turns by one server each round. Prints requests/s, the ratio to the bare server of the
 * same round, p99 and CPU per request; counts each appending server's rows against its 2xx answers.
 * Writes bench/results/floor-latest.json (floor-postgres-latest.json). See bench/README.md.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { timeOrderedId } from '../src/domain/ids.js';
import { floorOptions, type FloorOptions } from './options.js';
import { oneEvent } from './payloads.js';
import { RESULTS, revision, stopChild, stopOnSignal, type Child } from './processes.js';
import { SCENARIOS } from './scenarios.js';
import { openStore, type ServiceStore } from './stores.js';
import { driveTargets, startTarget, type Target } from './targets.js';

const SOURCE = 'bench-floor';

/** What a run drives, and what it started, for the cleanup. */
interface Setup {
  targets: Target[];
  started: Child[];
  /** CPU used so far by the PostgreSQL server, all its processes (postgres runs only), µs. */
  databaseCpu?: () => number | null;
  cleanup: () => Promise<void>;
  describe: string;
}

function sqliteRows(file: string): () => Promise<number> {
  return async () => {
    const db = new Database(file, { readonly: true });
    try {
      return db.prepare('SELECT count(*) FROM visits').pluck().get() as number;
    } finally {
      db.close();
    }
  };
}

async function sqliteSetup(options: FloorOptions, started: Child[]): Promise<Setup> {
  const dir = mkdtempSync(join(tmpdir(), 'collector-floor-'));
  const random = oneEvent(SOURCE);
  const ordered = oneEvent(SOURCE, () => timeOrderedId());
  const targets: Target[] = [];
  const bare = await startTarget.server('floor-bare', 'bench/bare-server.ts', {}, started);
  targets.push({ name: 'bare', child: bare, body: random, answered: 0 });
  for (const [name, label, index, body] of [
    ['append', 'floor-append', false, random],
    ['append + index', 'floor-index', true, random],
    ['append + index, ordered ids', 'floor-index-ordered', true, ordered],
  ] as const) {
    const file = join(dir, `${label}.db`);
    const env = {
      FLOOR_FILE: file,
      FLOOR_CHECKPOINT: options.checkpoint,
      ...(index ? { FLOOR_INDEX: 'session' } : {}),
    };
    const child = await startTarget.server(label, 'bench/floor-server.ts', env, started);
    targets.push({ name, child, body, rows: sqliteRows(file), answered: 0 });
  }
  for (const [name, label, body] of [
    ['service', 'floor-service', random],
    ['service, ordered ids', 'floor-service-ordered', ordered],
  ] as const) {
    // The embedded store, whatever DATABASE_URL the bench's own environment has.
    const env = { TRACK_DATA_DIR: join(dir, label), DATABASE_URL: '', TRACK_WORKERS: '' };
    targets.push({ name, child: await startTarget.service(label, env, started, SOURCE), body, answered: 0 });
  }
  return {
    targets,
    started,
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
    describe: `SQLite; floor checkpointing: ${options.checkpoint}`,
  };
}

async function postgresSetup(started: Child[]): Promise<Setup> {
  const store: ServiceStore = await openStore('postgres', 1);
  try {
    const url = store.env.DATABASE_URL!;
    const source = SOURCE + store.sourceSuffix;
    const first = oneEvent(source);
    const targets: Target[] = [];
    const bare = await startTarget.server('floor-bare', 'bench/bare-server.ts', {}, started);
    targets.push({ name: 'bare', child: bare, body: first, answered: 0 });
    for (const [name, table, index, inFlight] of [
      ['pg append', 'floor_append', false, 1],
      ['pg append + index', 'floor_index', true, 1],
      ['pg append + index, 2 in flight', 'floor_index_two', true, 2],
    ] as const) {
      const env = {
        FLOOR_DATABASE_URL: url,
        FLOOR_TABLE: table,
        FLOOR_IN_FLIGHT: String(inFlight),
        ...(index ? { FLOOR_INDEX: 'session' } : {}),
      };
      const child = await startTarget.server(
        table.replaceAll('_', '-'),
        'bench/floor-pg-server.ts',
        env,
        started,
      );
      const rows = async () => {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        try {
          return Number((await client.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n);
        } finally {
          await client.end();
        }
      };
      targets.push({ name, child, body: first, rows, answered: 0 });
    }
    const service = await startTarget.service('floor-service-pg', store.env, started, source);
    targets.push({ name: 'service', child: service, body: first, answered: 0 });
    const returning = SCENARIOS.find((s) => s.name === 'returning-visitor')!;
    const prepared = await returning.prepare(service, source);
    targets.push({
      name: 'service, returning visitors',
      child: service,
      body: prepared.body,
      headers: returning.headers,
      answered: 0,
    });
    return {
      targets,
      started,
      ...(store.databaseCpu ? { databaseCpu: store.databaseCpu } : {}),
      cleanup: async () => {
        await Promise.all(started.map(stopChild));
        await store.close(false);
      },
      describe: `PostgreSQL (${store.database}), synchronous_commit on`,
    };
  } catch (error) {
    await Promise.all(started.map(stopChild));
    await store.close(false);
    throw error;
  }
}

async function main(): Promise<number> {
  const options = floorOptions();
  const { seconds, rounds, connections } = options;
  mkdirSync(RESULTS, { recursive: true });
  const started: Child[] = [];
  const removeHandlers = stopOnSignal(started, () => undefined);
  const setup =
    options.store === 'postgres' ? await postgresSetup(started) : await sqliteSetup(options, started);
  const { targets } = setup;
  try {
    const rev = revision();
    console.log(
      `service at ${rev}; ${connections} connections, ${seconds} s per leg, ${rounds} rounds, ` +
        `1-event first visits; ${setup.describe}`,
    );
    const { legs, summary, wrong } = await driveTargets(targets, {
      seconds,
      rounds,
      connections,
      databaseCpu: setup.databaseCpu,
    });
    const file = options.store === 'postgres' ? 'floor-postgres-latest.json' : 'floor-latest.json';
    if (wrong.length) {
      console.error(`\n${wrong.join('\n')}\nbench/results/${file} not written`);
      return 1;
    }
    const report = {
      date: new Date().toISOString(),
      revision: rev,
      store: options.store,
      checkpoint: options.store === 'sqlite' ? options.checkpoint : undefined,
      connections,
      seconds,
      rounds,
      summary,
      legs,
    };
    writeFileSync(join(RESULTS, file), JSON.stringify(report, null, 2) + '\n');
    console.log(`\nbench/results/${file} written`);
    return 0;
  } finally {
    await Promise.all(started.map(stopChild));
    removeHandlers();
    await setup.cleanup();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
