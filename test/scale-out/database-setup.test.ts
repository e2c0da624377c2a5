/**
 * The README's PostgreSQL setup, run as it is written (role and database names made unique): one
 * owning role; or an owner that migrates and a role that only reads and writes data.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { test, type TestContext } from 'node:test';
import { testDatabase, usePostgres } from '../support/postgres.js';
import { ROOT } from '../support/process.js';
import { ok, spawnServer, sql, startCollector, track } from './support.js';

usePostgres();

/** The SQL blocks of the README's "PostgreSQL setup" section. */
function readmeSql(): string[] {
  const readme = readFileSync(`${ROOT}README.md`, 'utf8');
  const section = readme.slice(readme.indexOf('### PostgreSQL setup'), readme.indexOf('### Retention, logs'));
  return [...section.matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

const run = Math.random().toString(36).slice(2, 8);
/** Role and database names made unique to this run and block (the README's passwords are kept). */
const unique = (text: string, block: number) =>
  text.replace(/\bcollector(_owner|_app)?\b/g, (name) => `${name}_${run}${block}`);

/** Runs a block statement by statement (CREATE DATABASE cannot run in a transaction); `\connect` switches. */
async function runBlock(t: TestContext, index: number): Promise<string> {
  const block = readmeSql()[index]!;
  const { adminUrl } = await testDatabase();
  const created: { roles: string[]; databases: string[] } = { roles: [], databases: [] };
  t.after(async () => {
    for (const database of created.databases)
      await sql(adminUrl, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    for (const role of created.roles) await sql(adminUrl, `DROP ROLE IF EXISTS ${role}`);
  });
  let url = adminUrl;
  for (const statement of unique(block, index)
    .split(/;\s*\n|\n(?=\\connect)/)
    .map((s) => s.trim())
    .filter(Boolean)) {
    const connect = /^\\connect (\w+)\s*(?:\n|$)([\s\S]*)$/.exec(statement);
    if (connect) {
      const next = new URL(adminUrl);
      next.pathname = `/${connect[1]}`;
      url = next.toString();
      if (connect[2]!.trim()) await sql(url, connect[2]!.trim());
      continue;
    }
    await sql(url, statement);
    const role = /^CREATE ROLE (\w+)/.exec(statement);
    if (role) created.roles.push(role[1]!);
    const database = /^CREATE DATABASE (\w+)/.exec(statement);
    if (database) created.databases.push(database[1]!);
  }
  return adminUrl;
}

/** A connection string of the test server for `role` (password from the README) on `database`. */
async function urlFor(block: number, role: string, password: string, database: string): Promise<string> {
  const url = new URL((await testDatabase()).adminUrl);
  url.username = unique(role, block);
  url.password = password;
  url.pathname = `/${unique(database, block)}`;
  url.search = '';
  return url.toString();
}

test('the README has both setups', () => {
  const blocks = readmeSql();
  assert.equal(blocks.length, 2);
  assert.match(blocks[0]!, /CREATE DATABASE collector OWNER collector;/);
  assert.match(blocks[1]!, /TO collector_app;/);
});

test('one owning role: the collector creates its tables and serves', async (t) => {
  await runBlock(t, 0);
  const collector = await startCollector(t, await urlFor(0, 'collector', 'change-me', 'collector'));
  ok(await collector.manage('POST', '/event-source', { id: 'web' }));
  ok(await collector.post('/track', track('owner-role')));
  assert.equal((ok(await collector.manage('GET', '/events')).result as unknown[]).length, 1);
});

test('an owner that migrates and an application role that reads and writes only', async (t) => {
  await runBlock(t, 1);
  const owner = await urlFor(1, 'collector_owner', 'owner-secret', 'collector');
  const app = await urlFor(1, 'collector_app', 'app-secret', 'collector');

  const migrate = spawnServer({ DATABASE_URL: owner }, ['migrate']);
  const [code] = (await once(migrate.child, 'exit')) as [number | null];
  assert.equal(code, 0, migrate.output());

  const collector = await startCollector(t, app, { TRACK_PG_MIGRATE: 'no' });
  ok(await collector.manage('POST', '/event-source', { id: 'web' }));
  ok(await collector.post('/track', track('app-role')));
  ok(await collector.post('/track', track('app-role'))); // the session updated: UPDATE granted
  assert.equal((ok(await collector.manage('GET', '/events')).result as unknown[]).length, 2);
  // Destinations and their delivery state are data too.
  ok(await collector.manage('POST', '/destination', { id: 'd', url: 'http://127.0.0.1:9/', enabled: false }));
  ok(await collector.post('/track', track('app-role-2')));
  assert.equal(
    (ok(await collector.manage('GET', '/destination/d')).status as { pending: number }).pending,
    1,
  );
  // The application role cannot change the schema.
  await assert.rejects(sql(app, 'CREATE TABLE intruder (id int)'), /permission denied/);
});
