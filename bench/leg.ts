/**
 * One leg of `npm run bench`: one server under the load of one scenario for a fixed time, with its
 * requests/s, events/s, latency, answers, RSS and CPU.
 */
import type autocannon from 'autocannon';
import { cpuMeter, type LegCpu, type ThreadCpu } from './cpu.js';
import { load } from './load.js';
import { sampleRss } from './memory.js';
import { fmt, round1 } from './numbers.js';
import { withDescendants, type Child } from './processes.js';
import type { Window } from './profile.js';

export type Target = 'service' | 'bare';

/** What a leg sends: a scenario's bodies and headers. */
export interface Workload {
  scenario: string;
  eventsPerRequest: number;
  body: () => string;
  headers?: Record<string, string>;
}

export interface Leg {
  scenario: string;
  target: Target;
  /** 0 for a warm-up. */
  round: number;
  seconds: number;
  requests: number;
  requestsPerSec: number;
  eventsPerSec: number;
  ok: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  errors: number;
  timeouts: number;
  latencyMs: { mean: number; p50: number; p90: number; p99: number; max: number };
  rssPeakMb: number;
  rssHwmMb: number;
  cpu: LegCpu | null;
}

function statusCodes(result: autocannon.Result): Record<string, number> {
  const codes: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) codes[code] = stat.count ?? 0;
  return codes;
}

/**
 * Runs a leg; `window` is its span on the monotonic clock (µs), for the CPU profile. `databaseCpu`:
 * the CPU of the server's PostgreSQL server so far (µs), measured over the leg too.
 */
export async function runLeg(
  work: Workload,
  child: Child,
  target: Target,
  round: number,
  connections: number,
  seconds: number,
  databaseCpu?: () => number | null,
): Promise<{ leg: Leg; window: Window }> {
  const pids = withDescendants(child.pid);
  const rss = sampleRss(pids, 250);
  const cpu = cpuMeter(pids);
  const database = databaseCpu ? cpuMeter(databaseCpu) : null;
  const start = Number(process.hrtime.bigint() / 1000n);
  const result = await load({
    port: child.port,
    body: work.body,
    headers: work.headers,
    connections,
    seconds,
  });
  const end = Number(process.hrtime.bigint() / 1000n);
  const used = cpu.stop(result.requests.total);
  const databaseUs = database?.stop(result.requests.total)?.serverUsPerRequest;
  if (used && databaseUs !== undefined) used.databaseUsPerRequest = databaseUs;
  const mem = rss.stop();
  const elapsed = result.duration || seconds;
  const ok = result['2xx'];
  const leg: Leg = {
    scenario: work.scenario,
    target,
    round,
    seconds: round1(elapsed),
    requests: result.requests.total,
    requestsPerSec: Math.round(result.requests.total / elapsed),
    eventsPerSec: Math.round((ok * work.eventsPerRequest) / elapsed),
    ok,
    non2xx: result.non2xx,
    statusCodes: statusCodes(result),
    errors: result.errors,
    timeouts: result.timeouts,
    latencyMs: {
      mean: round1(result.latency.mean),
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
    },
    rssPeakMb: round1(mem.peak),
    rssHwmMb: round1(mem.hwm),
    cpu: used,
  };
  return { leg, window: { start, end } };
}

/** A server's CPU per request by thread, as the leg's line prints it. */
function threadsText(threads: ThreadCpu | undefined): string {
  if (!threads) return '';
  return ` [main thread ${threads.main}${threads.others.length ? `; others ${threads.others.join(' ')}` : ''}]`;
}

/** The console line of a measured leg. */
export function legLine(leg: Leg): string {
  const codes = leg.non2xx ? ` ${JSON.stringify(leg.statusCodes)}` : '';
  return (
    `  round ${leg.round} ${leg.target.padEnd(7)} ${fmt(leg.requestsPerSec).padStart(7)} requests/s` +
    ` ${fmt(leg.eventsPerSec).padStart(9)} events/s  p50 ${leg.latencyMs.p50} ms  p99 ${leg.latencyMs.p99} ms` +
    `  non-2xx ${leg.non2xx}${codes}  errors ${leg.errors}  RSS ${leg.rssPeakMb} MB` +
    (leg.cpu
      ? `  CPU ${leg.cpu.serverUsPerRequest} µs/request${threadsText(leg.cpu.threads)}` +
        (leg.cpu.databaseUsPerRequest === undefined ? '' : ` (PostgreSQL ${leg.cpu.databaseUsPerRequest})`) +
        ` (load generator ${leg.cpu.loadUsPerRequest})` +
        `  machine ${leg.cpu.machineBusyPercent}% busy`
      : '')
  );
}
