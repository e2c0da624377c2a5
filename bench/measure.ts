/**
 * One scenario of `npm run bench`: prepared against the service, then a warm-up leg on each server
 * and `rounds` rounds of (service leg, bare leg), the same bodies for both. Every request the
 * service acknowledged goes into the ledger of the stored-count check.
 */
import { legLine, runLeg, type Leg, type Target, type Workload } from './leg.js';
import { settle } from './settle.js';
import { fmt } from './numbers.js';
import type { Child } from './processes.js';
import type { Window } from './profile.js';
import type { Scenario } from './scenarios.js';
import type { Servers } from './servers.js';
import type { Ledger } from './stored.js';
import { summarize, type ScenarioSummary } from './summary.js';

export interface Measured {
  summary: ScenarioSummary;
  /** The measured legs (warm-ups left out). */
  legs: Leg[];
  /** When the service's measured legs ran, for its CPU profile. */
  windows: Window[];
}

export interface Plan {
  rounds: number;
  /** Seconds per measured leg. */
  duration: number;
  /** Seconds of the warm-up leg per server; 0 for none. */
  warmup: number;
  connections: number;
}

/** Readies a scenario against the service: its workload, with what preparing stored counted. */
export async function prepareWorkload(
  scenario: Scenario,
  service: Child,
  sourceId: string,
  ledger: Ledger,
): Promise<{ work: Workload; cleanup?: () => Promise<void> }> {
  const prepared = await scenario.prepare(service, sourceId);
  ledger.answered(sourceId, prepared.storedEvents ?? 0);
  const { name, eventsPerRequest, headers } = scenario;
  return {
    work: { scenario: name, eventsPerRequest, headers, body: prepared.body },
    cleanup: prepared.cleanup,
  };
}

export async function measureScenario(
  scenario: Scenario,
  sourceId: string,
  servers: Servers,
  plan: Plan,
  ledger: Ledger,
): Promise<Measured> {
  console.log(`\n${scenario.name}: ${scenario.description}`);
  const { work, cleanup } = await prepareWorkload(scenario, servers.service, sourceId, ledger);
  const targets = [
    ['service', servers.service],
    ['bare', servers.bare],
  ] as const;
  const onService = (target: Target, leg: Leg) => {
    if (target === 'service') ledger.leg(sourceId, leg.ok, scenario.eventsPerRequest);
  };
  const measured: Measured = {
    summary: {
      name: scenario.name,
      description: scenario.description,
      eventsPerRequest: scenario.eventsPerRequest,
    },
    legs: [],
    windows: [],
  };
  try {
    if (plan.warmup > 0) {
      for (const [target, child] of targets) {
        const { leg } = await runLeg(work, child, target, 0, plan.connections, plan.warmup);
        onService(target, leg);
        console.log(`  warm-up ${target.padEnd(7)} ${fmt(leg.requestsPerSec)} requests/s`);
      }
    }
    const byTarget: Record<Target, Leg[]> = { service: [], bare: [] };
    for (let round = 1; round <= plan.rounds; round++) {
      for (const [target, child] of targets) {
        await settle(targets.map(([, c]) => c.pid));
        const { leg, window } = await runLeg(work, child, target, round, plan.connections, plan.duration);
        measured.legs.push(leg);
        byTarget[target].push(leg);
        onService(target, leg);
        if (target === 'service') measured.windows.push(window);
        console.log(legLine(leg));
      }
    }
    summarize(measured.summary, byTarget.service, byTarget.bare);
  } finally {
    await cleanup?.();
  }
  return measured;
}
