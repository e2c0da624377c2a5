/**
 * The soak of `npm run bench -- --soak <minutes>`: the service under a fixed rate (50% of the
 * measured peak) for minutes, its RSS sampled every 10 s; flat means at most 10% growth.
 */
import { runLeg, type Workload } from './leg.js';
import { load } from './load.js';
import { sampleRss } from './memory.js';
import { fmt, round1 } from './numbers.js';
import { prepareWorkload } from './measure.js';
import { withDescendants, type Child } from './processes.js';
import type { Scenario } from './scenarios.js';
import type { Ledger } from './stored.js';
import type { ScenarioSummary } from './summary.js';

export interface SoakSummary {
  minutes: number;
  targetRate: number;
  requestsPerSec: number;
  ok: number;
  non2xx: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
  rssStartMb: number;
  rssEndMb: number;
  rssMaxMb: number;
  /** End over start, in percent. */
  rssGrowthPercent: number;
  flat: boolean;
  samples: { t: number; rss: number }[];
}

export async function soak(
  work: Workload,
  child: Child,
  rate: number,
  minutes: number,
  connections: number,
): Promise<SoakSummary> {
  const seconds = Math.round(minutes * 60);
  console.log(`\nsoak: ${minutes} min at ${fmt(rate)} requests/s (50% of the measured peak), RSS every 10 s`);
  const rss = sampleRss(withDescendants(child.pid), 10_000, (value) =>
    process.stdout.write(`  RSS ${value.toFixed(1)} MB\n`),
  );
  const result = await load({
    port: child.port,
    body: work.body,
    headers: work.headers,
    connections,
    seconds,
    overallRate: rate,
  });
  const { samples } = rss.stop();
  // The first sample is taken before any load: the start figure is the one 10 s in, once warm.
  const start = samples[1]?.rss ?? samples[0]!.rss;
  const end = samples[samples.length - 1]!.rss;
  const growth = ((end - start) / start) * 100;
  return {
    minutes,
    targetRate: rate,
    requestsPerSec: Math.round(result.requests.total / (result.duration || seconds)),
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    rssStartMb: round1(start),
    rssEndMb: round1(end),
    rssMaxMb: round1(Math.max(...samples.map((s) => s.rss))),
    rssGrowthPercent: round1(growth),
    flat: growth <= 10,
    samples: samples.map((s) => ({ t: Math.round(s.t), rss: round1(s.rss) })),
  };
}

/** The console line of a soak. */
export function soakLine(s: SoakSummary): string {
  return (
    `  ${s.flat ? 'PASS' : 'MISS'}  soak: flat RSS (start ${s.rssStartMb} MB, end ${s.rssEndMb} MB, max ${s.rssMaxMb} MB, ` +
    `${s.rssGrowthPercent}%); ${fmt(s.requestsPerSec)} requests/s, p99 ${s.p99Ms} ms, non-2xx ${s.non2xx}`
  );
}

/**
 * The soak after the scenarios, with `scenario`'s bodies at half its measured service requests/s
 * (a leg measures that first when the scenario was not among those run). Its answers go into the
 * ledger.
 */
export async function soakAfter(
  scenario: Scenario,
  sourceId: string,
  service: Child,
  measured: ScenarioSummary[],
  plan: { minutes: number; duration: number; connections: number },
  ledger: Ledger,
): Promise<SoakSummary> {
  const { work } = await prepareWorkload(scenario, service, sourceId, ledger);
  let peak = measured.find((s) => s.name === scenario.name)?.service?.requestsPerSec;
  if (!peak) {
    console.log(`\nsoak: measuring the peak rate of ${scenario.name} first`);
    const { leg } = await runLeg(work, service, 'service', 0, plan.connections, plan.duration);
    ledger.leg(sourceId, leg.ok, scenario.eventsPerRequest);
    peak = leg.requestsPerSec;
  }
  const rate = Math.max(1, Math.round(peak / 2));
  const summary = await soak(work, service, rate, plan.minutes, plan.connections);
  ledger.leg(sourceId, summary.ok, scenario.eventsPerRequest);
  return summary;
}
