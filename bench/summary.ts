/**
 * A scenario's figures from its measured legs: the mean and worst of each server's legs, the ratio
 * of the service to the bare server (per round and overall), and the targets it meets or misses.
 */
import type { LegCpu } from './cpu.js';
import type { Leg } from './leg.js';
import { mean, round2, sum } from './numbers.js';

export interface ScenarioSummary {
  name: string;
  description: string;
  eventsPerRequest: number;
  service?: TargetSummary;
  bare?: TargetSummary;
  /** Mean service requests/s over mean bare requests/s. */
  ratio?: number;
  ratiosPerRound?: number[];
  targets?: TargetCheck[];
}

export interface TargetSummary {
  requestsPerSec: number;
  eventsPerSec: number;
  /** Worst leg. */
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
  rssPeakMb: number;
  /** Mean over the legs of the server's CPU per request (all threads), µs. */
  cpuUsPerRequest?: number;
  /** Mean over the legs of the PostgreSQL server's CPU per request, µs (service on PostgreSQL). */
  databaseCpuUsPerRequest?: number;
  /** Mean over the legs of the load generator's CPU per request, µs. */
  loadCpuUsPerRequest?: number;
  /** Mean over the legs of the busy share of all cores, %. */
  machineBusyPercent?: number;
}

export interface TargetCheck {
  target: string;
  value: string;
  pass: boolean;
}

function summarizeLegs(legs: Leg[]): TargetSummary {
  return {
    requestsPerSec: Math.round(mean(legs.map((l) => l.requestsPerSec))),
    eventsPerSec: Math.round(mean(legs.map((l) => l.eventsPerSec))),
    p50Ms: Math.max(...legs.map((l) => l.latencyMs.p50)),
    p99Ms: Math.max(...legs.map((l) => l.latencyMs.p99)),
    non2xx: sum(legs.map((l) => l.non2xx)),
    errors: sum(legs.map((l) => l.errors)),
    rssPeakMb: Math.max(...legs.map((l) => l.rssPeakMb)),
    ...cpuSummary(legs),
  };
}

function cpuSummary(legs: Leg[]): Partial<TargetSummary> {
  const measured = legs.flatMap((l) => (l.cpu ? [l.cpu] : []));
  if (measured.length === 0) return {};
  return {
    cpuUsPerRequest: Math.round(mean(measured.map((c) => c.serverUsPerRequest))),
    ...databaseSummary(measured),
    loadCpuUsPerRequest: Math.round(mean(measured.map((c) => c.loadUsPerRequest))),
    machineBusyPercent: Math.round(mean(measured.map((c) => c.machineBusyPercent))),
  };
}

function databaseSummary(measured: LegCpu[]): Partial<TargetSummary> {
  const database = measured.flatMap((c) =>
    c.databaseUsPerRequest === undefined ? [] : [c.databaseUsPerRequest],
  );
  return database.length ? { databaseCpuUsPerRequest: Math.round(mean(database)) } : {};
}

/** The targets of the issue that asked for the benchmark; only the service is held to them. */
function checks(summary: ScenarioSummary): TargetCheck[] {
  const s = summary.service;
  if (!s) return [];
  const list: TargetCheck[] = [
    { target: 'non-2xx = 0', value: String(s.non2xx), pass: s.non2xx === 0 && s.errors === 0 },
  ];
  if (summary.name === '1-event') {
    list.push(
      {
        target: 'ratio to bare >= 0.5',
        value: (summary.ratio ?? 0).toFixed(2),
        pass: (summary.ratio ?? 0) >= 0.5,
      },
      { target: 'p99 <= 25 ms', value: `${s.p99Ms} ms`, pass: s.p99Ms <= 25 },
    );
  }
  if (summary.name === '100-events') {
    list.push({
      target: 'events/s >= 100,000',
      value: s.eventsPerSec.toLocaleString('en-US'),
      pass: s.eventsPerSec >= 100_000,
    });
  }
  return list;
}

/** Fills in a scenario's figures from its measured legs; round i of `service` pairs with `bare`'s. */
export function summarize(summary: ScenarioSummary, service: Leg[], bare: Leg[]): void {
  summary.service = summarizeLegs(service);
  summary.bare = summarizeLegs(bare);
  summary.ratio = round2(summary.service.requestsPerSec / summary.bare.requestsPerSec);
  summary.ratiosPerRound = service.map((l, i) => round2(l.requestsPerSec / bare[i]!.requestsPerSec));
  summary.targets = checks(summary);
}
