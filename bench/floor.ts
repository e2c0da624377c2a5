/**
 * `npm run bench:floor`: how fast a durable collector can be on this stack and machine, step by step.
 * Drives, in turn (A B C … A B C …) and with the 1-event load of `npm run bench`:
 *   bare            the bare server (bench/bare-server.ts): parse and answer, nothing stored
 *   append          the bare server plus a group-committed append of each body to one SQLite table
 *   append + index  the same with a unique index on the session id (the client's random ids)
 *   … ordered ids   the same, driven with time-ordered session ids instead
 *   service         the collector (embedded store, fresh data folder)
 *   … ordered ids   a second collector, driven with time-ordered session ids
 * and prints requests/s, ratio to the bare server in the same round, p99, and CPU per request.
 * Each appending server's stored rows are counted afterwards against its 2xx answers.
 * Writes bench/results/floor-latest.json. See bench/README.md, "How far a durable collector gets".
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { timeOrderedId } from '../src/domain/ids.js';
import { cpuMeter, type LegCpu } from './cpu.js';
import { load } from './load.js';
import { oneEvent } from './payloads.js';
import {
  freePort,
  HOST,
  printedReady,
  ROOT,
  spawnChild,
  stopChild,
  waitUntil,
  type Child,
} from './processes.js';

const RESULTS = join(ROOT, 'bench', 'results');
const TOKEN = 'bench-token';
const SOURCE = 'bench-floor';

interface Target {
  name: string;
  child: Child;
  body: () => string;
  /** The appending servers' database file, to count what they stored. */
  file?: string;
  answered: number;
}

interface FloorLeg {
  target: string;
  round: number;
  requestsPerSec: number;
  p99Ms: number;
  non2xx: number;
  cpu: LegCpu | null;
}

function options() {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '10' },
      rounds: { type: 'string', default: '2' },
      connections: { type: 'string', default: '64' },
    },
  });
  const positive = (name: string, raw: string | undefined) => {
    const n = Math.round(Number(raw));
    if (!Number.isFinite(n) || n < 1) throw new Error(`--${name} must be a number >= 1`);
    return n;
  };
  return {
    seconds: positive('duration', values.duration),
    rounds: positive('rounds', values.rounds),
    connections: positive('connections', values.connections),
  };
}

async function startService(name: string, dir: string, started: Child[]): Promise<Child> {
  const child = spawnChild(
    name,
    ['dist/server.js'],
    { TRACK_DATA_DIR: dir, TRACK_API_TOKEN: TOKEN, LOG_LEVEL: 'warn' },
    await freePort(),
    RESULTS,
  );
  started.push(child);
  const base = `http://${HOST}:${child.port}`;
  await waitUntil(child, async () => (await fetch(`${base}/health`)).status === 200);
  const res = await fetch(`${base}/event-source`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ id: SOURCE, name: 'Benchmark floor' }),
  });
  if (res.status !== 200) throw new Error(`POST /event-source: ${res.status} ${await res.text()}`);
  return child;
}

/** One of the bench's own servers (bare or floor), `node --import tsx <script>`. */
async function startServer(name: string, script: string, env: Record<string, string>, started: Child[]) {
  const child = spawnChild(name, ['--import', 'tsx', script], env, await freePort(), RESULTS);
  started.push(child);
  await printedReady(child);
  return child;
}

function storedRows(file: string): number {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare('SELECT count(*) FROM visits').pluck().get() as number;
  } finally {
    db.close();
  }
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

async function main(): Promise<number> {
  const { seconds, rounds, connections } = options();
  mkdirSync(RESULTS, { recursive: true });
  const dir = mkdtempSync(join(tmpdir(), 'collector-floor-'));
  const random = oneEvent(SOURCE);
  const ordered = oneEvent(SOURCE, () => timeOrderedId());
  const targets: Target[] = [];
  const started: Child[] = [];
  try {
    const bare = await startServer('bare', 'bench/bare-server.ts', {}, started);
    targets.push({ name: 'bare', child: bare, body: random, answered: 0 });
    for (const [name, index, body] of [
      ['append', false, random],
      ['append + index', true, random],
      ['append + index, ordered ids', true, ordered],
    ] as const) {
      const file = join(dir, `floor-${targets.length}.db`);
      const env = { FLOOR_FILE: file, ...(index ? { FLOOR_INDEX: 'session' } : {}) };
      const child = await startServer(`floor-${targets.length}`, 'bench/floor-server.ts', env, started);
      targets.push({ name, child, body, file, answered: 0 });
    }
    for (const [name, body] of [
      ['service', random],
      ['service, ordered ids', ordered],
    ] as const) {
      const label = `service-${targets.length}`;
      targets.push({ name, child: await startService(label, join(dir, label), started), body, answered: 0 });
    }

    console.log(`${connections} connections, ${seconds} s per leg, ${rounds} rounds, 1-event first visits`);
    for (const t of targets) t.answered += (await load(t.child.port, t.body, connections, 2))['2xx']; // warm-up
    const legs: FloorLeg[] = [];
    for (let round = 1; round <= rounds; round++) {
      for (const t of targets) {
        const cpu = cpuMeter(t.child.pid);
        const result = await load(t.child.port, t.body, connections, seconds);
        t.answered += result['2xx'];
        const leg: FloorLeg = {
          target: t.name,
          round,
          requestsPerSec: Math.round(result.requests.total / (result.duration || seconds)),
          p99Ms: result.latency.p99,
          non2xx: result.non2xx + result.errors,
          cpu: cpu.stop(result.requests.total),
        };
        legs.push(leg);
        const c = leg.cpu;
        console.log(
          `round ${round}  ${t.name.padEnd(28)} ${String(leg.requestsPerSec).padStart(6)} req/s  p99 ${leg.p99Ms} ms  ` +
            `non-2xx ${leg.non2xx}` +
            (c
              ? `  server ${c.serverUsPerRequest} µs/req, load ${c.loadUsPerRequest} µs/req, machine ${c.machineBusyPercent}%`
              : ''),
        );
      }
    }

    const summary = targets.map((t) => {
      const mine = legs.filter((l) => l.target === t.name);
      const ratios = mine.map(
        (l) =>
          l.requestsPerSec / legs.find((b) => b.target === 'bare' && b.round === l.round)!.requestsPerSec,
      );
      const stored = t.file ? storedRows(t.file) : undefined;
      return {
        target: t.name,
        requestsPerSec: Math.round(mean(mine.map((l) => l.requestsPerSec))),
        ratio: Math.round(mean(ratios) * 100) / 100,
        ratiosPerRound: ratios.map((r) => Math.round(r * 100) / 100),
        p99Ms: Math.max(...mine.map((l) => l.p99Ms)),
        serverUsPerRequest: Math.round(mean(mine.map((l) => l.cpu?.serverUsPerRequest ?? NaN))),
        non2xx: mine.reduce((n, l) => n + l.non2xx, 0),
        ...(stored === undefined ? {} : { answered: t.answered, stored }),
      };
    });
    console.log('\ntarget                        req/s   ratio (per round)     p99   server µs/req  stored');
    for (const s of summary) {
      console.log(
        `${s.target.padEnd(28)} ${String(s.requestsPerSec).padStart(7)}   ${s.ratio.toFixed(2)} (${s.ratiosPerRound.join(', ')})`.padEnd(
          58,
        ) +
          `${String(s.p99Ms).padStart(4)} ms ${String(s.serverUsPerRequest).padStart(10)}` +
          (s.stored === undefined ? '' : `     ${s.stored} of ${s.answered} answered`),
      );
    }
    const short = summary.filter((s) => s.stored !== undefined && s.stored < s.answered!);
    writeFileSync(
      join(RESULTS, 'floor-latest.json'),
      JSON.stringify(
        { date: new Date().toISOString(), connections, seconds, rounds, summary, legs },
        null,
        2,
      ) + '\n',
    );
    console.log('\nbench/results/floor-latest.json written');
    if (short.length) {
      console.error(`stored fewer rows than answered: ${short.map((s) => s.target).join(', ')}`);
      return 1;
    }
    return 0;
  } finally {
    await Promise.all(started.map(stopChild));
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
