/** Command-line options of the benchmarks (`npm run bench`, `npm run bench:floor`). */
import { parseArgs } from 'node:util';

/** The number an option gives; throws unless it is a finite number of at least `min`. */
export function numberOption(name: string, raw: string | undefined, min: number): number {
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min) throw new Error(`--${name} must be a number >= ${min}`);
  return value;
}

const RUN_HELP = `npm run bench -- [options]

  --store <name>      the service's store: sqlite (embedded, fresh data folder; default) or postgres
                      (DATABASE_URL if set, else a throwaway embedded PostgreSQL)
  --workers <n>       collector processes of the service (TRACK_WORKERS; postgres only; default 1)
  --duration <s>      seconds per measured leg (default 10)
  --rounds <n>        A B rounds per scenario, service then bare (default 2: A B A B)
  --warmup <s>        unmeasured warm-up per server and scenario (default 2; 0 = none)
  --scenario <names>  comma-separated filter: 1-event, 100-events, validation, returning-visitor
                      (default all)
  --connections <n>   concurrent connections (default 64)
  --prefill <n>       first fill the store with n first visits (sqlite only; default 0)
  --rules             also run 1-event and returning-visitor with ten profile rules on page-view
  --soak <minutes>    afterwards, a soak at 50% of the measured peak rate, RSS sampled every 10 s
  --cpu-prof          run the service with --cpu-prof into bench/results/ and print the top costs
  --no-readme         do not rewrite the benchmark section of README.md (sqlite runs only)
  --readme-only       only rewrite that section from bench/results/latest.json (no run)
  --keep-data         keep the service's temporary data folder
`;

export type Store = 'sqlite' | 'postgres';

export interface RunOptions {
  store: Store;
  workers: number;
  duration: number;
  rounds: number;
  warmup: number;
  /** Scenario name filters; undefined for all. */
  scenarios: string[] | undefined;
  connections: number;
  /** First visits written into the store before the service starts (bench/prefill.ts). */
  prefill: number;
  /** Also run the scenarios of bench/rules.ts with ten profile rules. */
  rules: boolean;
  /** 0 for no soak. */
  soakMinutes: number;
  cpuProf: boolean;
  readme: boolean;
  readmeOnly: boolean;
  keepData: boolean;
}

/** The options of `npm run bench`; prints the help and exits with `--help`. */
export function runOptions(args = process.argv.slice(2)): RunOptions {
  const { values } = parseArgs({
    args,
    options: {
      store: { type: 'string', default: 'sqlite' },
      workers: { type: 'string', default: '1' },
      duration: { type: 'string', default: '10' },
      rounds: { type: 'string', default: '2' },
      warmup: { type: 'string', default: '2' },
      scenario: { type: 'string' },
      connections: { type: 'string', default: '64' },
      prefill: { type: 'string', default: '0' },
      soak: { type: 'string' },
      'cpu-prof': { type: 'boolean', default: false },
      rules: { type: 'boolean', default: false },
      'no-readme': { type: 'boolean', default: false },
      'readme-only': { type: 'boolean', default: false },
      'keep-data': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    console.log(RUN_HELP);
    process.exit(0);
  }
  const store = values.store;
  if (store !== 'sqlite' && store !== 'postgres') throw new Error('--store must be sqlite or postgres');
  const workers = Math.round(numberOption('workers', values.workers, 1));
  const prefill = Math.round(numberOption('prefill', values.prefill, 0));
  if (prefill > 0 && store !== 'sqlite') throw new Error('--prefill needs --store sqlite');
  if (workers > 1 && store !== 'postgres')
    throw new Error('--workers above 1 needs --store postgres (the embedded store allows one process)');
  return {
    store,
    workers,
    duration: numberOption('duration', values.duration, 1),
    rounds: Math.round(numberOption('rounds', values.rounds, 1)),
    warmup: numberOption('warmup', values.warmup, 0),
    scenarios: values.scenario
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    connections: Math.round(numberOption('connections', values.connections, 1)),
    prefill,
    rules: values.rules,
    soakMinutes: values.soak === undefined ? 0 : numberOption('soak', values.soak, 0.1),
    cpuProf: values['cpu-prof'],
    readme: !values['no-readme'],
    readmeOnly: values['readme-only'],
    keepData: values['keep-data'],
  };
}

/** The options of the benchmarks that drive servers in turn: seconds per leg, rounds, connections. */
export interface LegOptions {
  seconds: number;
  rounds: number;
  connections: number;
}

const LEG_OPTIONS = {
  duration: { type: 'string', default: '10' },
  rounds: { type: 'string', default: '2' },
  connections: { type: 'string', default: '64' },
} as const;

function legsOf(values: { duration: string; rounds: string; connections: string }): LegOptions {
  return {
    seconds: numberOption('duration', values.duration, 1),
    rounds: Math.round(numberOption('rounds', values.rounds, 1)),
    connections: Math.round(numberOption('connections', values.connections, 1)),
  };
}

/** `--duration`, `--rounds` and `--connections` alone (`npm run bench:delivery`). */
export function legOptions(args = process.argv.slice(2)): LegOptions {
  const { values } = parseArgs({ args, options: LEG_OPTIONS, strict: true });
  return legsOf(values);
}

export interface TrustOptions extends LegOptions {
  /** Runs, each with fresh processes and data folders. */
  runs: number;
}

/** The options of `npm run bench:trust`: those of the legs and `--runs`. */
export function trustOptions(args = process.argv.slice(2)): TrustOptions {
  const { values } = parseArgs({
    args,
    options: { ...LEG_OPTIONS, runs: { type: 'string', default: '1' } },
    strict: true,
  });
  return { ...legsOf(values), runs: Math.round(numberOption('runs', values.runs, 1)) };
}

export interface FloorOptions extends LegOptions {
  /** Who checkpoints the appending servers' files: the service's checkpointer thread, or SQLite. */
  checkpoint: 'service' | 'sqlite';
  /** The store of the floors and the service: SQLite files, or PostgreSQL. */
  store: Store;
}

/** The options of `npm run bench:floor`. */
export function floorOptions(args = process.argv.slice(2)): FloorOptions {
  const { values } = parseArgs({
    args,
    options: {
      ...LEG_OPTIONS,
      checkpoint: { type: 'string', default: 'service' },
      store: { type: 'string', default: 'sqlite' },
    },
    strict: true,
  });
  if (values.checkpoint !== 'service' && values.checkpoint !== 'sqlite')
    throw new Error('--checkpoint must be service or sqlite');
  if (values.store !== 'sqlite' && values.store !== 'postgres')
    throw new Error('--store must be sqlite or postgres');
  return { ...legsOf(values), checkpoint: values.checkpoint, store: values.store };
}
