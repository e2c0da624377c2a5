/**
 * Drives benchmark targets in turn (bench:floor, bench:trust): each target is a server and the body
 * it is sent, the first one the bare server. A warm-up leg each, then `rounds` rounds with the
 * order turning by one target each round; each target's ratio to the bare server of the same round,
 * p99, CPU per request (and the database server's, when measured), and the rows each appending
 * server stored against its 2xx answers.
 */
import { cpuMeter, type LegCpu } from './cpu.js';
import { load } from './load.js';
import { mean, round2 } from './numbers.js';
import { settle } from './settle.js';
import {
  createSource,
  gone,
  printedReady,
  RESULTS,
  serviceReady,
  spawnBenchServer,
  spawnService,
  withDescendants,
  type Child,
} from './processes.js';

const WARMUP_SECONDS = 2;

/** Starts the servers of targets, each added to `started` (to be stopped whatever happens). */
export const startTarget = {
  /** The collector with `env`, ready, with the event source `source`. */
  async service(name: string, env: Record<string, string>, started: Child[], source: string): Promise<Child> {
    const child = await spawnService(name, env, RESULTS);
    started.push(child);
    await serviceReady(child);
    await createSource(child, source, 'Benchmark');
    return child;
  },
  /** One of the bench's own servers (bare or floor), `node --import tsx <script>`. */
  async server(name: string, script: string, env: Record<string, string>, started: Child[]): Promise<Child> {
    const child = await spawnBenchServer(name, script, env, RESULTS);
    started.push(child);
    await printedReady(child);
    return child;
  },
};

export interface Target {
  name: string;
  child: Child;
  body: () => string;
  headers?: Record<string, string>;
  /** The appending servers' row count, to check what they stored. */
  rows?: () => Promise<number>;
  answered: number;
}

export interface TargetLeg {
  target: string;
  round: number;
  requestsPerSec: number;
  p99Ms: number;
  /** Answers other than 2xx, connection errors and timeouts. */
  failed: number;
  cpu: LegCpu | null;
  /** CPU of the PostgreSQL server (all its processes) per request, µs; postgres runs only. */
  databaseUsPerRequest?: number | null;
}

export interface Drive {
  seconds: number;
  rounds: number;
  connections: number;
  /** CPU used so far by the database server, µs, when it is measured. */
  databaseCpu?: () => number | null;
}

export async function driveTargets(targets: Target[], { seconds, rounds, connections, databaseCpu }: Drive) {
  const legs: TargetLeg[] = [];
  const drive = async (t: Target, s: number) => {
    const result = await load({
      port: t.child.port,
      body: t.body,
      headers: t.headers,
      connections,
      seconds: s,
    });
    t.answered += result['2xx'];
    if (gone(t.child))
      throw new Error(`${t.child.name} stopped during its leg:\n${t.child.logTail.join('\n')}`);
    return result;
  };
  for (const t of targets) await drive(t, WARMUP_SECONDS);
  for (let round = 1; round <= rounds; round++) {
    const turn = (round - 1) % targets.length;
    for (const t of [...targets.slice(turn), ...targets.slice(0, turn)]) {
      await settle([...new Set(targets.map((target) => target.child.pid))]);
      const cpu = cpuMeter(withDescendants(t.child.pid));
      const database = databaseCpu ? cpuMeter(databaseCpu) : null;
      const result = await drive(t, seconds);
      const leg: TargetLeg = {
        target: t.name,
        round,
        requestsPerSec: Math.round(result.requests.total / (result.duration || seconds)),
        p99Ms: result.latency.p99,
        failed: result.non2xx + result.errors + result.timeouts,
        cpu: cpu.stop(result.requests.total),
        ...(database
          ? { databaseUsPerRequest: database.stop(result.requests.total)?.serverUsPerRequest ?? null }
          : {}),
      };
      legs.push(leg);
      const c = leg.cpu;
      console.log(
        `round ${round}  ${t.name.padEnd(30)} ${String(leg.requestsPerSec).padStart(6)} req/s  ` +
          `p99 ${leg.p99Ms} ms  failed ${leg.failed}` +
          (c
            ? `  server ${c.serverUsPerRequest} µs/req, load ${c.loadUsPerRequest} µs/req, machine ${c.machineBusyPercent}%`
            : '') +
          (leg.databaseUsPerRequest != null ? `, postgres ${leg.databaseUsPerRequest} µs/req` : ''),
      );
    }
  }

  // Rows stored without an answer: requests in flight when a leg stopped, one per connection and leg.
  const inFlight = connections * (rounds + 1);
  const summary = [];
  for (const t of targets) {
    const mine = legs.filter((l) => l.target === t.name);
    const bareOf = (round: number) => legs.find((b) => b.target === 'bare' && b.round === round)!;
    const ratios = mine.map((l) => l.requestsPerSec / bareOf(l.round).requestsPerSec);
    const cpu = mine.flatMap((l) => (l.cpu ? [l.cpu.serverUsPerRequest] : []));
    const db = mine.flatMap((l) => (l.databaseUsPerRequest != null ? [l.databaseUsPerRequest] : []));
    const stored = t.rows ? await t.rows() : undefined;
    summary.push({
      target: t.name,
      requestsPerSec: Math.round(mean(mine.map((l) => l.requestsPerSec))),
      ratio: round2(mean(ratios)),
      ratiosPerRound: ratios.map(round2),
      p99Ms: Math.max(...mine.map((l) => l.p99Ms)),
      serverUsPerRequest: cpu.length ? Math.round(mean(cpu)) : null,
      ...(db.length ? { databaseUsPerRequest: Math.round(mean(db)) } : {}),
      failed: mine.reduce((n, l) => n + l.failed, 0),
      ...(stored === undefined
        ? {}
        : {
            answered: t.answered,
            stored,
            storedOk: stored >= t.answered && stored - t.answered <= inFlight,
          }),
    });
  }
  console.log(
    '\ntarget                          req/s   ratio (per round)     p99   server µs/req' +
      (databaseCpu ? '  postgres µs/req' : '') +
      '  stored',
  );
  for (const s of summary) {
    console.log(
      `${s.target.padEnd(30)} ${String(s.requestsPerSec).padStart(7)}   ${s.ratio.toFixed(2)} (${s.ratiosPerRound.join(', ')})`.padEnd(
        60,
      ) +
        `${String(s.p99Ms).padStart(4)} ms ${String(s.serverUsPerRequest ?? '-').padStart(10)}` +
        (databaseCpu ? String(s.databaseUsPerRequest ?? '-').padStart(17) : '') +
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
  return { legs, summary, wrong };
}
