/**
 * The scenarios of `npm run bench`, a group at a time: prepared against the service, then a warm-up
 * leg on each server and `rounds` rounds of (service leg, bare leg) per scenario, the same bodies for
 * both servers. Every request the service acknowledged goes into the ledger of the stored-count check.
 */
import { legLine, runLeg, type Leg, type Target, type Workload } from './leg.js';
import { settle } from './settle.js';
import { fmt } from './numbers.js';
import type { Child } from './processes.js';
import type { Window } from './profile.js';
import type { Prepared, Scenario } from './scenarios.js';
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
): Promise<{ work: Workload } & Pick<Prepared, 'cleanup' | 'during'>> {
  const prepared = await scenario.prepare(service, sourceId);
  ledger.answered(sourceId, prepared.storedEvents ?? 0);
  const { name, eventsPerRequest, headers } = scenario;
  return {
    work: { scenario: name, eventsPerRequest, headers, body: prepared.body },
    cleanup: prepared.cleanup,
    during: prepared.during,
  };
}

/** A scenario of a group being measured: its workload, its legs so far, and what it needs. */
interface Member extends Pick<Prepared, 'cleanup' | 'during'> {
  scenario: Scenario;
  sourceId: string;
  work: Workload;
  measured: Measured;
  byTarget: Record<Target, Leg[]>;
}

/**
 * Measures a group of scenarios in turn (one scenario alone, or one with its variant): a warm-up
 * leg on each server for each, then `rounds` rounds in which each scenario runs its service leg and
 * its bare leg. The order of the scenarios flips from one round to the next (A B, B A, …), so that
 * what drifts over a run (the store growing, the machine's other load) falls on both alike rather
 * than on whichever comes second.
 */
export async function measureGroup(
  group: Scenario[],
  sourceOf: (name: string) => string,
  servers: Servers,
  plan: Plan,
  ledger: Ledger,
): Promise<Measured[]> {
  const targets = [
    ['service', servers.service],
    ['bare', servers.bare],
  ] as const;
  const members: Member[] = [];
  try {
    for (const scenario of group) {
      console.log(`\n${scenario.name}: ${scenario.description}`);
      const sourceId = sourceOf(scenario.name);
      const prepared = await prepareWorkload(scenario, servers.service, sourceId, ledger);
      const { name, description, eventsPerRequest } = scenario;
      members.push({
        scenario,
        sourceId,
        ...prepared,
        measured: { summary: { name, description, eventsPerRequest }, legs: [], windows: [] },
        byTarget: { service: [], bare: [] },
      });
    }
    /** The legs of one scenario in one round (0: the warm-up), with what it needs around them. */
    const block = async (m: Member, round: number) => {
      if (group.length > 1) console.log(`  ${m.scenario.name}`);
      const undo = await m.during?.();
      try {
        for (const [target, child] of targets) {
          const seconds = round === 0 ? plan.warmup : plan.duration;
          if (round > 0) await settle(targets.map(([, c]) => c.pid));
          const database = target === 'service' ? servers.databaseCpu : undefined;
          const { leg, window } = await runLeg(
            m.work,
            child,
            target,
            round,
            plan.connections,
            seconds,
            database,
          );
          if (target === 'service') ledger.leg(m.sourceId, leg.ok, m.scenario.eventsPerRequest);
          if (round === 0) {
            console.log(`  warm-up ${target.padEnd(7)} ${fmt(leg.requestsPerSec)} requests/s`);
            continue;
          }
          m.measured.legs.push(leg);
          m.byTarget[target].push(leg);
          if (target === 'service') m.measured.windows.push(window);
          console.log(legLine(leg));
        }
      } finally {
        await undo?.();
      }
    };
    if (plan.warmup > 0) for (const m of members) await block(m, 0);
    for (let round = 1; round <= plan.rounds; round++) {
      for (const m of round % 2 === 1 ? members : [...members].reverse()) await block(m, round);
    }
    for (const m of members) summarize(m.measured.summary, m.byTarget.service, m.byTarget.bare);
  } finally {
    for (const m of members) await m.cleanup?.();
  }
  return members.map((m) => m.measured);
}
