/** The PostgreSQL settings of a real collector process: TRACK_PG_MIGRATE and TRACK_PG_POOL. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { migrations } from '../../src/storage/postgres/migrations.js';
import { tempDir } from '../helpers.js';
import { testSchema, usePostgres } from '../support/postgres.js';
import { ok, spawnServer, sql, startCollector, track } from './support.js';

usePostgres();

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

test('TRACK_PG_MIGRATE=no: refuses to start on a database without the migrations, starts once `npm run migrate` ran', async (t) => {
  const url = await testSchema();
  const dataDir = tempDir();
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const refused = spawnServer({
    DATABASE_URL: url,
    TRACK_PG_MIGRATE: 'no',
    TRACK_DATA_DIR: dataDir,
    PORT: '0',
  });
  const [code] = (await once(refused.child, 'exit')) as [number | null];
  assert.equal(code, 1, refused.output());
  assert.match(
    refused.output(),
    new RegExp(
      `configuration error: the database lacks migrations ${migrations.map((_, i) => i + 1).join(', ')} and TRACK_PG_MIGRATE=no: run \`npm run migrate\` with this DATABASE_URL first`,
    ),
  );
  // Nothing was created.
  const [{ present }] = (await sql<{ present: boolean }>(
    url,
    "SELECT to_regclass('schema_migrations') IS NOT NULL AS present",
  )) as [{ present: boolean }];
  assert.equal(present, false);

  const migrate = spawnSync(process.execPath, ['--import', 'tsx', 'src/server.ts', 'migrate'], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: url },
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(migrate.status, 0, migrate.stderr);

  const collector = await startCollector(t, url, { TRACK_PG_MIGRATE: 'no' });
  ok(await collector.manage('POST', '/event-source', { id: 'web' }));
  ok(await collector.post('/track', track('migrated')));
  assert.equal(await collector.stop(), 0, collector.output());
});

// Without the bound, this load opens about 11 connections (the default pool of 10, plus LISTEN).
test('TRACK_PG_POOL bounds the connections of a process (the pool, plus one for LISTEN)', async (t) => {
  const url = await testSchema();
  const collector = await startCollector(t, url, { TRACK_PG_POOL: '2' });
  ok(await collector.manage('POST', '/event-source', { id: 'web' }));

  const connections = async () => {
    const [{ count }] = (await sql<{ count: number }>(
      url,
      `SELECT count(*)::int AS count FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = 'event-collector'`,
    )) as [{ count: number }];
    return count;
  };
  let most = 0;
  let loading = true;
  const sampling = (async () => {
    while (loading) {
      most = Math.max(most, await connections());
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  for (let round = 0; round < 3; round++) {
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        i % 4 === 0
          ? collector.manage('GET', '/events?limit=5')
          : collector.post('/track', track(`pool-${round}-${i}`)),
      ),
    );
    for (const answer of answers) ok(answer);
  }
  loading = false;
  await sampling;
  t.diagnostic(`at most ${most} connections`);
  assert.ok(most >= 1, 'connections were seen');
  assert.ok(most <= 3, `${most} connections with TRACK_PG_POOL=2`);
  assert.equal(await collector.stop(), 0, collector.output());
});
