/**
 * The results of `npm run bench`: what a run records, and its JSON files in bench/results/
 * (`<time>.json`, ignored by git, and `latest.json` for the embedded store or
 * `postgres-latest.json` for PostgreSQL, committed).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, release, totalmem } from 'node:os';
import { join } from 'node:path';
import type { Leg } from './leg.js';
import { round1 } from './numbers.js';
import type { Store } from './options.js';
import { RESULTS } from './processes.js';
import type { ServiceProfiles } from './profile.js';
import type { SoakSummary } from './soak.js';
import type { StoredCheck } from './stored.js';
import type { ScenarioSummary } from './summary.js';

export interface Report {
  date: string;
  command: string;
  /** Commit of the service under test. */
  revision?: string;
  machine: Machine;
  note: string;
  /** The service's store (absent in results from before the option: sqlite). */
  store?: Store;
  /** Where the PostgreSQL server came from: `embedded` (started by the run) or `DATABASE_URL`. */
  database?: 'embedded' | 'DATABASE_URL';
  /** Collector processes of the service (TRACK_WORKERS). */
  workers?: number;
  connections: number;
  /** First visits written into the store before the service started (`--prefill`), when any. */
  prefill?: number;
  durationSec: number;
  rounds: number;
  warmupSec: number;
  scenarios: ScenarioSummary[];
  legs: Leg[];
  soak?: SoakSummary;
  storedCheck: StoredCheck;
  service: { rssEndMb: number; rssHwmMb: number; logLines: number };
  /** One profile per thread of the service: `service` (HTTP and tracking), `writer` (the store). */
  cpuProfile?: ServiceProfiles;
}

export interface Machine {
  nproc: number;
  cpu: string;
  memoryGb: number;
  node: string;
  kernel: string;
}

export function machine(): Machine {
  return {
    nproc: availableParallelism(),
    cpu: cpus()[0]?.model.trim() ?? 'unknown CPU',
    memoryGb: round1(totalmem() / 1024 ** 3),
    node: process.version,
    kernel: release(),
  };
}

const latestFile = (store: Store) => (store === 'postgres' ? 'postgres-latest.json' : 'latest.json');

/** Writes `<stamp>.json` and the store's latest file; returns their paths from the repository. */
export function writeResults(report: Report, stamp: string): string[] {
  const json = `${JSON.stringify(report, null, 2)}\n`;
  const files = [
    `${stamp}${report.store === 'postgres' ? '-postgres' : ''}.json`,
    latestFile(report.store ?? 'sqlite'),
  ];
  for (const file of files) writeFileSync(join(RESULTS, file), json);
  return files.map((f) => `bench/results/${f}`);
}

/** The last run's results on a store. */
export function readLatest(store: Store): Report {
  return JSON.parse(readFileSync(join(RESULTS, latestFile(store)), 'utf8')) as Report;
}
