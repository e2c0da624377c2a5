/**
 * `npm run bench:floor`: how fast a durable collector can be on this stack and machine, step by step.
 * Drives each of these servers in turn, with the 1-event load of `npm run bench`:
 *   bare            the bare server (bench/bare-server.ts): parse and answer, nothing stored
 *   append          the bare server plus a group-committed append of each body to one SQLite table
 *   append + index  the same with a unique index on the session id (the client's random ids)
 *   … ordered ids   the same, driven with time-ordered session ids instead
 *   service         the collector (embedded store, fresh data folder)
 *   … ordered ids   a second collector, driven with time-ordered session ids
 * The order turns by one server each round. Prints requests/s, the ratio to the bare server of the
 * same round, p99 and CPU per request; counts each appending server's rows against its 2xx answers.
 * Writes bench/results/floor-latest.json. See bench/README.md.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { timeOrderedId } from '../src/domain/ids.js';
import { cpuMeter, type LegCpu } from './cpu.js';
import { load } from './load.js';
import { mean, round2 } from './numbers.js';
import { floorOptions } from './options.js';
import { oneEvent } from './payloads.js';
import {
  createSource,
  gone,
  printedReady,
  RESULTS,
  revision,
  serviceReady,
  spawnBenchServer,
  spawnService,
  stopChild,
  stopOnSignal,
  type Child,
} from './processes.js';

const SOURCE = 'bench-floor';
const WARMUP_SECONDS = 2;

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
  /** Answers other than 2xx, connection errors and timeouts. */
  failed: number;
  cpu: LegCpu | null;
}

async function startService(name: string, dir: string, started: Child[]): Promise<Child> {
  // The embedded store, whatever DATABASE_URL the bench's own environment has.
  const child = await spawnService(name, { TRACK_DATA_DIR: dir, DATABASE_URL: '' }, RESULTS);
  started.push(child);
  await serviceReady(child);
  await createSource(child, SOURCE, 'Benchmark floor');
  return child;
}

/** One of the bench's own servers (bare or floor), `node --import tsx <script>`. */
async function startServer(name: string, script: string, env: Record<string, string>, started: Child[]) {
  const child = await spawnBenchServer(name, script, env, RESULTS);
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

async function main(): Promise<number> {
  const { seconds, rounds, connections, checkpoint } = floorOptions();
  mkdirSync(RESULTS, { recursive: true });
  const dir = mkdtempSync(join(tmpdir(), 'collector-floor-'));
  const random = oneEvent(SOURCE);
  const ordered = oneEvent(SOURCE, () => timeOrderedId());
  const targets: Target[] = [];
  const started: Child[] = [];
  const removeHandlers = stopOnSignal(started, () => rmSync(dir, { recursive: true, force: true }));
  try {
    const bare = await startServer('floor-bare', 'bench/bare-server.ts', {}, started);
    targets.push({ name: 'bare', child: bare, body: random, answered: 0 });
    for (const [name, label, index, body] of [
      ['append', 'floor-append', false, random],
      ['append + index', 'floor-index', true, random],
      ['append + index, ordered ids', 'floor-index-ordered', true, ordered],
    ] as const) {
      const file = join(dir, `${label}.db`);
      const env = {
        FLOOR_FILE: file,
        FLOOR_CHECKPOINT: checkpoint,
        ...(index ? { FLOOR_INDEX: 'session' } : {}),
      };
      const child = await startServer(label, 'bench/floor-server.ts', env, started);
      targets.push({ name, child, body, file, answered: 0 });
    }
    for (const [name, label, body] of [
      ['service', 'floor-service', random],
      ['service, ordered ids', 'floor-service-ordered', ordered],
    ] as const) {
      targets.push({ name, child: await startService(label, join(dir, label), started), body, answered: 0 });
    }

    const rev = revision();
    console.log(
      `service at ${rev}; ${connections} connections, ${seconds} s per leg, ${rounds} rounds, ` +
        `1-event first visits; floor checkpointing: ${checkpoint}`,
    );
    const legs: FloorLeg[] = [];
    const drive = async (t: Target, s: number) => {
      const result = await load({ port: t.child.port, body: t.body, connections, seconds: s });
      t.answered += result['2xx'];
      if (gone(t.child))
        throw new Error(`${t.child.name} stopped during its leg:\n${t.child.logTail.join('\n')}`);
      return result;
    };
    for (const t of targets) await drive(t, WARMUP_SECONDS);
    for (let round = 1; round <= rounds; round++) {
      const turn = (round - 1) % targets.length;
      for (const t of [...targets.slice(turn), ...targets.slice(0, turn)]) {
        const cpu = cpuMeter(t.child.pid);
        const result = await drive(t, seconds);
        const leg: FloorLeg = {
          target: t.name,
          round,
          requestsPerSec: Math.round(result.requests.total / (result.duration || seconds)),
          p99Ms: result.latency.p99,
          failed: result.non2xx + result.errors + result.timeouts,
          cpu: cpu.stop(result.requests.total),
        };
        legs.push(leg);
        const c = leg.cpu;
        console.log(
          `round ${round}  ${t.name.padEnd(28)} ${String(leg.requestsPerSec).padStart(6)} req/s  ` +
            `p99 ${leg.p99Ms} ms  failed ${leg.failed}` +
            (c
              ? `  server ${c.serverUsPerRequest} µs/req, load ${c.loadUsPerRequest} µs/req, machine ${c.machineBusyPercent}%`
              : ''),
        );
      }
    }

    // Rows stored without an answer: requests in flight when a leg stopped, one per connection and leg.
    const inFlight = connections * (rounds + 1);
    const summary = targets.map((t) => {
      const mine = legs.filter((l) => l.target === t.name);
      const bareOf = (round: number) => legs.find((b) => b.target === 'bare' && b.round === round)!;
      const ratios = mine.map((l) => l.requestsPerSec / bareOf(l.round).requestsPerSec);
      const cpu = mine.flatMap((l) => (l.cpu ? [l.cpu.serverUsPerRequest] : []));
      const stored = t.file ? storedRows(t.file) : undefined;
      return {
        target: t.name,
        requestsPerSec: Math.round(mean(mine.map((l) => l.requestsPerSec))),
        ratio: round2(mean(ratios)),
        ratiosPerRound: ratios.map(round2),
        p99Ms: Math.max(...mine.map((l) => l.p99Ms)),
        serverUsPerRequest: cpu.length ? Math.round(mean(cpu)) : null,
        failed: mine.reduce((n, l) => n + l.failed, 0),
        ...(stored === undefined
          ? {}
          : {
              answered: t.answered,
              stored,
              storedOk: stored >= t.answered && stored - t.answered <= inFlight,
            }),
      };
    });
    console.log('\ntarget                        req/s   ratio (per round)     p99   server µs/req  stored');
    for (const s of summary) {
      console.log(
        `${s.target.padEnd(28)} ${String(s.requestsPerSec).padStart(7)}   ${s.ratio.toFixed(2)} (${s.ratiosPerRound.join(', ')})`.padEnd(
          58,
        ) +
          `${String(s.p99Ms).padStart(4)} ms ${String(s.serverUsPerRequest ?? '-').padStart(10)}` +
          (s.stored === undefined
            ? ''
            : `     ${s.stored} rows for ${s.answered} answers${s.storedOk ? '' : ' (WRONG)'}`),
      );
    }
    const wrong = [
      ...summary
        .filter((s) => s.storedOk === false)
        .map((s) => `${s.target}: stored rows do not match its answers`),
      ...summary.filter((s) => s.failed > 0).map((s) => `${s.target}: ${s.failed} requests failed`),
    ];
    if (wrong.length) {
      console.error(`\n${wrong.join('\n')}\nbench/results/floor-latest.json not written`);
      return 1;
    }
    const report = {
      date: new Date().toISOString(),
      revision: rev,
      checkpoint,
      connections,
      seconds,
      rounds,
      summary,
      legs,
    };
    writeFileSync(join(RESULTS, 'floor-latest.json'), JSON.stringify(report, null, 2) + '\n');
    console.log('\nbench/results/floor-latest.json written');
    return 0;
  } finally {
    await Promise.all(started.map(stopChild));
    removeHandlers();
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
