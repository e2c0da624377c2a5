/**
 * `npm run bench`: load test of POST /track against the service (embedded store, fresh data folder)
 * and, in the same run, against a bare Fastify server that only parses the body (bench/bare-server.ts),
 * alternately (A B A B). Prints and records requests/s, events/s, latency, non-2xx, peak RSS and the
 * ratio to the bare server, then checks through the read API that every acknowledged event is stored.
 * See bench/README.md.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { availableParallelism, cpus, release, tmpdir, totalmem } from 'node:os';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import * as prettier from 'prettier';
import { cpuMeter, type LegCpu } from './cpu.js';
import { load } from './load.js';
import { numberOption } from './options.js';
import { postgresMarkdown, runPostgresBench, writePostgresReadme } from './postgres.js';
import { manyEvents, oneEvent } from './payloads.js';
import {
  freePort,
  HOST,
  printedReady,
  revision,
  ROOT,
  serviceReady,
  spawnChild,
  spawnService,
  stopChild,
  TOKEN,
  type Child,
} from './processes.js';
import { summarizeProfile, type ProfileSummary, type Window } from './profile.js';

const RESULTS = join(ROOT, 'bench', 'results');
const README = join(ROOT, 'README.md');
const START_MARKER = '<!-- bench:start -->';
const END_MARKER = '<!-- bench:end -->';
const VALIDATION_TYPE = 'page-view';

// ---------------------------------------------------------------------------------------------
// Options

const HELP = `npm run bench -- [options]

  --duration <s>      seconds per measured leg (default 10)
  --rounds <n>        A B rounds per scenario, service then bare (default 2: A B A B)
  --warmup <s>        unmeasured warm-up per server and scenario (default 2; 0 = none)
  --scenario <names>  comma-separated filter: 1-event, 100-events, validation (default all)
  --connections <n>   concurrent connections (default 64)
  --soak <minutes>    afterwards, a soak at 50% of the measured peak rate, RSS sampled every 10 s
  --cpu-prof          run the service with --cpu-prof into bench/results/ and print the top costs
  --no-readme         do not rewrite the benchmark section of README.md
  --no-postgres       skip the PostgreSQL run (embedded store vs 1, 2 and 4 collector processes)
  --readme-only       only rewrite that section from bench/results/latest.json (no run)
  --keep-data         keep the service's temporary data folder
`;

function parseOptions() {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '10' },
      rounds: { type: 'string', default: '2' },
      warmup: { type: 'string', default: '2' },
      scenario: { type: 'string' },
      connections: { type: 'string', default: '64' },
      soak: { type: 'string' },
      'cpu-prof': { type: 'boolean', default: false },
      'no-readme': { type: 'boolean', default: false },
      'readme-only': { type: 'boolean', default: false },
      'keep-data': { type: 'boolean', default: false },
      'no-postgres': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    console.log(HELP);
    process.exit(0);
  }
  return {
    duration: numberOption('duration', values.duration, 1),
    rounds: Math.round(numberOption('rounds', values.rounds, 1)),
    warmup: numberOption('warmup', values.warmup, 0),
    scenarios: values.scenario
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    connections: Math.round(numberOption('connections', values.connections, 1)),
    soakMinutes: values.soak === undefined ? 0 : numberOption('soak', values.soak, 0.1),
    cpuProf: values['cpu-prof'],
    readme: !values['no-readme'],
    readmeOnly: values['readme-only'],
    keepData: values['keep-data'],
    postgres: !values['no-postgres'],
  };
}

type Options = ReturnType<typeof parseOptions>;

// ---------------------------------------------------------------------------------------------
// Scenarios

interface Scenario {
  name: string;
  description: string;
  sourceId: string;
  eventsPerRequest: number;
  body: () => string;
  /** Runs before the scenario; a string return value skips the scenario with that reason. */
  setup?: (api: Api) => Promise<string | undefined>;
  teardown?: (api: Api) => Promise<void>;
}

function scenarios(): Scenario[] {
  return [
    {
      name: '1-event',
      description:
        'tracker first visit: unique session, no profile, page/browser/screen context, 1 page-view',
      sourceId: 'bench-1-event',
      eventsPerRequest: 1,
      body: oneEvent('bench-1-event'),
    },
    {
      name: '100-events',
      description: '100 small events per request, unique session (the shape of Tracardi’s load test)',
      sourceId: 'bench-100-events',
      eventsPerRequest: 100,
      body: manyEvents('bench-100-events', 100),
    },
    {
      name: 'validation',
      description: '1-event payload with a JSON Schema active on page-view (event@properties)',
      sourceId: 'bench-validation',
      eventsPerRequest: 1,
      body: oneEvent('bench-validation'),
      async setup(api) {
        const res = await api.request('POST', '/event/management', {
          event_type: VALIDATION_TYPE,
          name: 'Page view',
          validation: {
            enabled: true,
            json_schema: {
              'event@properties': {
                type: 'object',
                properties: { path: { type: 'string' } },
                required: ['path'],
              },
            },
          },
        });
        if (res.status === 404) return 'skipped: validation API not available';
        if (res.status !== 200) throw new Error(`POST /event/management: ${res.status} ${await res.text()}`);
        return undefined;
      },
      async teardown(api) {
        await api.request('DELETE', `/event/management/${VALIDATION_TYPE}`);
      },
    },
  ];
}

// ---------------------------------------------------------------------------------------------
// Processes

/** VmRSS and VmHWM (peak RSS over the process lifetime) in MB, from /proc. */
function memory(pid: number): { rss: number; hwm: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
  } catch {
    return null;
  }
}

/** Samples a process's RSS at an interval until stopped; returns the peak and the samples. */
function sampleRss(pid: number, intervalMs: number, onSample?: (rss: number) => void) {
  const samples: { t: number; rss: number }[] = [];
  const started = Date.now();
  const take = () => {
    const m = memory(pid);
    if (m) {
      samples.push({ t: (Date.now() - started) / 1000, rss: m.rss });
      onSample?.(m.rss);
    }
  };
  take();
  const timer = setInterval(take, intervalMs);
  return {
    samples,
    stop() {
      clearInterval(timer);
      take();
      const peak = Math.max(...samples.map((s) => s.rss));
      return { peak, hwm: memory(pid)?.hwm ?? NaN, samples };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Management API

interface Api {
  request(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<Response>;
}

function api(port: number): Api {
  return {
    request: (method, path, body) =>
      fetch(`http://${HOST}:${port}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${TOKEN}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
  };
}

interface StoredEvent {
  id: string;
  metadata: { time: { insert: string } };
}

/** (insert time, id) of an event: the order of `GET /events` is descending on it. */
const position = (e: StoredEvent) => [e.metadata.time.insert, e.id] as const;
const before = (a: readonly [string, string], b: readonly [string, string]) =>
  a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);

/**
 * Counts the stored events of one source by paging GET /events (1000 per page) along `next`.
 * Checks that the pages go strictly down the (insert time, id) order, so that a cursor that does not
 * advance is reported instead of looping, and gives up after `maxPages`.
 */
async function countStored(
  client: Api,
  sourceId: string,
  maxPages: number,
): Promise<{ count: number; pages: number; error?: string }> {
  let count = 0;
  let pages = 0;
  let cursor: string | null = null;
  let last: readonly [string, string] | null = null;
  do {
    const query: string = `/events?source_id=${encodeURIComponent(sourceId)}&limit=1000${
      cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''
    }`;
    const res = await client.request('GET', query);
    if (res.status !== 200) throw new Error(`GET ${query}: ${res.status} ${await res.text()}`);
    const page = (await res.json()) as { result: StoredEvent[]; next: string | null };
    pages++;
    for (const event of page.result) {
      const here = position(event);
      if (last && !before(here, last)) {
        return {
          count,
          pages,
          error:
            `GET /events paging is out of order on page ${pages}: ${here.join(' ')} ` +
            `comes after ${last.join(' ')} (a cursor that does not advance?)`,
        };
      }
      last = here;
      count++;
    }
    cursor = page.next;
    if (cursor && pages >= maxPages)
      return { count, pages, error: `GET /events still has a next page after ${pages} pages` };
  } while (cursor);
  return { count, pages };
}

// ---------------------------------------------------------------------------------------------
// Load

interface Leg {
  scenario: string;
  target: 'service' | 'bare';
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

async function runLeg(
  scenario: Scenario,
  child: Child,
  target: 'service' | 'bare',
  round: number,
  options: Options,
  seconds: number,
): Promise<{ leg: Leg; window: Window }> {
  const rss = sampleRss(child.pid, 250);
  const cpu = cpuMeter(child.pid);
  const start = Number(process.hrtime.bigint() / 1000n);
  const result = await load({
    port: child.port,
    body: scenario.body,
    connections: options.connections,
    seconds,
  });
  const end = Number(process.hrtime.bigint() / 1000n);
  const used = cpu.stop(result.requests.total);
  const mem = rss.stop();
  const elapsed = result.duration || seconds;
  const ok = result['2xx'];
  const leg: Leg = {
    scenario: scenario.name,
    target,
    round,
    seconds: round1(elapsed),
    requests: result.requests.total,
    requestsPerSec: Math.round(result.requests.total / elapsed),
    eventsPerSec: Math.round((ok * scenario.eventsPerRequest) / elapsed),
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

const round1 = (n: number) => Math.round(n * 10) / 10;
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const mean = (values: number[]) => (values.length ? sum(values) / values.length : 0);

interface ScenarioSummary {
  name: string;
  description: string;
  eventsPerRequest: number;
  skipped?: string;
  service?: TargetSummary;
  bare?: TargetSummary;
  /** Mean service requests/s over mean bare requests/s. */
  ratio?: number;
  ratiosPerRound?: number[];
  targets?: TargetCheck[];
}

interface TargetSummary {
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
  /** Mean over the legs of the load generator's CPU per request, µs. */
  loadCpuUsPerRequest?: number;
  /** Mean over the legs of the busy share of all cores, %. */
  machineBusyPercent?: number;
}

interface TargetCheck {
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
    loadCpuUsPerRequest: Math.round(mean(measured.map((c) => c.loadUsPerRequest))),
    machineBusyPercent: Math.round(mean(measured.map((c) => c.machineBusyPercent))),
  };
}

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

// ---------------------------------------------------------------------------------------------
// Soak

interface SoakSummary {
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

async function soak(scenario: Scenario, child: Child, rate: number, minutes: number, connections: number) {
  const seconds = Math.round(minutes * 60);
  console.log(`\nsoak: ${minutes} min at ${fmt(rate)} requests/s (50% of the measured peak), RSS every 10 s`);
  const rss = sampleRss(child.pid, 10_000, (value) => process.stdout.write(`  RSS ${value.toFixed(1)} MB\n`));
  const result = await load({
    port: child.port,
    body: scenario.body,
    connections,
    seconds,
    overallRate: rate,
  });
  const { samples } = rss.stop();
  // The first sample is taken before any load: the start figure is the one 10 s in, once warm.
  const start = samples[1]?.rss ?? samples[0]!.rss;
  const end = samples[samples.length - 1]!.rss;
  const growth = ((end - start) / start) * 100;
  const summary: SoakSummary = {
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
  return summary;
}

// ---------------------------------------------------------------------------------------------
// Output

/** The commit the service was built from, and whether src/ had uncommitted changes. */
function machine() {
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
  return {
    nproc: availableParallelism(),
    cpu,
    memoryGb: round1(totalmem() / 1024 ** 3),
    node: process.version,
    kernel: release(),
  };
}

function pad(cells: string[], widths: number[]): string {
  return cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
}

const fmt = (n: number | undefined) => (n === undefined ? '-' : n.toLocaleString('en-US'));

const HEAD = [
  'scenario',
  'target',
  'requests/s',
  'events/s',
  'p50 ms',
  'p99 ms',
  'non-2xx',
  'peak RSS MB',
  'CPU µs/request',
  'machine busy %',
  'ratio service/bare',
];

function tableRows(summaries: ScenarioSummary[]): string[][] {
  const rows: string[][] = [];
  for (const s of summaries) {
    if (s.skipped || !s.service || !s.bare) {
      rows.push([s.name, s.skipped ?? 'not run', ...HEAD.slice(2).map(() => '')]);
      continue;
    }
    for (const [target, t] of [
      ['service', s.service],
      ['bare', s.bare],
    ] as const) {
      rows.push([
        target === 'service' ? s.name : '',
        target,
        fmt(t.requestsPerSec),
        fmt(t.eventsPerSec),
        fmt(t.p50Ms),
        fmt(t.p99Ms),
        fmt(t.non2xx + t.errors),
        t.rssPeakMb.toFixed(1),
        fmt(t.cpuUsPerRequest),
        fmt(t.machineBusyPercent),
        target === 'service' ? (s.ratio ?? 0).toFixed(2) : '',
      ]);
    }
  }
  return rows;
}

function printTable(summaries: ScenarioSummary[]) {
  const rows = [HEAD, ...tableRows(summaries)];
  const widths = HEAD.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  console.log('');
  for (const row of rows) console.log(pad(row, widths));
}

const NOTE =
  'The load generator shares the machine with the server under test, so absolute figures depend on the ' +
  'machine and on what else runs on it; the figure to compare is the ratio to the bare Fastify server ' +
  'measured in the same run.';

function markdown(report: Report): string {
  const lines: string[] = [];
  const m = report.machine;
  lines.push(
    `Last run: \`${report.command}\`, ${report.date.slice(0, 10)}, service at ${report.revision ?? 'unknown commit'}, ` +
      `${m.nproc} × ${m.cpu}, Node ${m.node}` +
      `${report.cpuProfile ? ' (service under --cpu-prof: slower than usual)' : ''}.`,
    '',
    `| ${HEAD.join(' | ')} |`,
    `|${HEAD.map((_, i) => (i < 2 ? '---' : '---:')).join('|')}|`,
  );
  for (const row of tableRows(report.scenarios)) lines.push(`| ${row.join(' | ')} |`);
  lines.push('');
  lines.push(
    `${report.connections} connections, ${report.durationSec} s per leg, ${report.rounds} rounds (service, bare, service, bare, …); ` +
      'requests/s and events/s are the mean of the legs, p50/p99 the worst leg, peak RSS the highest sample; ' +
      'CPU µs/request is the server process (all its threads) per request, machine busy % the share of all cores in use ' +
      '(the load generator included), both the mean of the legs.',
  );
  const targets = report.scenarios.flatMap((s) =>
    (s.targets ?? []).map((t) => `${s.name} ${t.target}: ${t.pass ? 'PASS' : 'MISS'} (${t.value})`),
  );
  if (report.soak) targets.push(`soak flat RSS: ${report.soak.flat ? 'PASS' : 'MISS'}`);
  if (targets.length) lines.push('', `Targets: ${targets.join('; ')}.`);
  if (report.soak) {
    const s = report.soak;
    lines.push(
      '',
      `Soak: ${s.minutes} min at ${fmt(s.targetRate)} requests/s: RSS ${s.rssStartMb} MB at start, ${s.rssEndMb} MB at the end ` +
        `(max ${s.rssMaxMb} MB, ${s.rssGrowthPercent >= 0 ? '+' : ''}${s.rssGrowthPercent}%), p99 ${s.p99Ms} ms, ` +
        `non-2xx ${s.non2xx}.`,
    );
  }
  const c = report.storedCheck;
  lines.push(
    '',
    `Stored-count check: ${c.ok ? 'OK' : 'FAILED'}: ${fmt(c.acknowledged)} events acknowledged, ${fmt(c.stored)} stored` +
      ` (read back through \`GET /events\`; the surplus is requests in flight when a leg stopped)` +
      `${c.perSource
        .filter((p) => p.error)
        .map((p) => `; ${p.sourceId}: ${p.error}`)
        .join('')}.`,
    '',
    NOTE,
    '',
    'How to run and what each scenario is: [bench/README.md](bench/README.md).',
  );
  return lines.join('\n');
}

/** Formats the section as the repository's Prettier configuration would (aligned tables). */
async function formatMarkdown(text: string): Promise<string> {
  const config = (await prettier.resolveConfig(README)) ?? {};
  return prettier.format(text, { ...config, parser: 'markdown' });
}

async function writeReadme(section: string) {
  const block = `${START_MARKER}\n\n${await formatMarkdown(section)}${END_MARKER}`;
  const current = existsSync(README) ? readFileSync(README, 'utf8') : '';
  const start = current.indexOf(START_MARKER);
  const end = current.indexOf(END_MARKER);
  let next: string;
  if (start >= 0 && end > start) {
    next = current.slice(0, start) + block + current.slice(end + END_MARKER.length);
  } else {
    const base = current.replace(/\s*$/, '');
    next = `${base}${base ? '\n\n' : ''}## Benchmarks\n\n${block}\n`;
  }
  writeFileSync(README, next);
}

interface Report {
  date: string;
  command: string;
  /** Commit of the service under test. */
  revision?: string;
  machine: ReturnType<typeof machine>;
  note: string;
  connections: number;
  durationSec: number;
  rounds: number;
  warmupSec: number;
  scenarios: ScenarioSummary[];
  legs: Leg[];
  soak?: SoakSummary;
  storedCheck: {
    ok: boolean;
    acknowledged: number;
    stored: number;
    countSeconds: number;
    perSource: {
      sourceId: string;
      acknowledged: number;
      maxUnacknowledged: number;
      stored: number;
      pages: number;
      error?: string;
    }[];
  };
  service: { rssEndMb: number; rssHwmMb: number; logLines: number };
  /** One profile per thread of the service: `service` (HTTP and tracking), `writer` (the store). */
  cpuProfile?: Record<string, { file: string; scenarios: Record<string, ProfileSummary> }>;
}

function printProfile(title: string, p: ProfileSummary) {
  console.log(
    `\nwhere the time goes: ${title} (${p.busyMs} ms busy, ${p.idleMs} ms idle${p.wholeProfile ? ', whole profile' : ''})`,
  );
  console.log('  top self time by function:');
  for (const f of p.functions.slice(0, 20))
    console.log(`  ${f.percent.toFixed(1).padStart(5)}%  ${f.name}  ${f.where}`);
  console.log('  by component:');
  for (const c of p.components.slice(0, 12)) console.log(`  ${c.percent.toFixed(1).padStart(5)}%  ${c.name}`);
}

/**
 * The service's per-thread profiles: thread 0 is the service thread (HTTP and tracking); of the
 * others, the busiest is the store's writer thread (the checkpointer's is left out).
 */
function profileThreads(dir: string): { label: string; file: string }[] {
  if (!existsSync(dir)) return [];
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => ({ file: join(dir, f), thread: Number(f.split('.').at(-3)) }));
  const main = files.find((f) => f.thread === 0);
  const others = files
    .filter((f) => f.thread !== 0)
    .map((f) => ({ ...f, busy: summarizeProfile(f.file, []).busyMs }))
    .sort((a, b) => b.busy - a.busy);
  return [
    ...(main ? [{ label: 'service', file: main.file }] : []),
    ...(others[0] ? [{ label: 'writer', file: others[0].file }] : []),
  ];
}

// ---------------------------------------------------------------------------------------------
// Main

async function main(): Promise<number> {
  const options = parseOptions();
  if (options.readmeOnly) {
    const last = JSON.parse(readFileSync(join(RESULTS, 'latest.json'), 'utf8')) as Report;
    await writeReadme(markdown(last));
    console.log('README.md: benchmark section rewritten from bench/results/latest.json');
    return 0;
  }
  const all = scenarios();
  const selected = options.scenarios
    ? all.filter((s) => options.scenarios!.some((f) => s.name === f || s.name.includes(f)))
    : all;
  if (selected.length === 0) throw new Error(`no scenario matches ${options.scenarios?.join(',')}`);
  if (!existsSync(join(ROOT, 'dist', 'server.js')))
    throw new Error('dist/server.js is missing: npm run build');
  mkdirSync(RESULTS, { recursive: true });

  const date = new Date();
  const stamp = date.toISOString().replace(/[:.]/g, '-');
  const info = machine();
  const rev = revision();
  const args = process.argv.slice(2);
  const command = `npm run bench${args.length ? ` -- ${args.join(' ')}` : ''}`;
  console.log(`${command}\nservice at ${rev}; ${info.nproc} × ${info.cpu}, Node ${info.node}`);
  console.log(`note: ${NOTE}`);

  const dataDir = mkdtempSync(join(tmpdir(), 'collector-bench-'));
  const barePort = await freePort();
  // Node writes one profile per thread, named CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile.
  const profileDir = join(RESULTS, `service-${stamp}-profiles`);
  const service = await spawnService(
    'service',
    { TRACK_DATA_DIR: dataDir },
    RESULTS,
    options.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
  );
  const bare = spawnChild('bare', ['--import', 'tsx', 'bench/bare-server.ts'], {}, barePort, RESULTS);
  const children = [service, bare];
  const onSignal = () => {
    for (const child of children) child.proc.kill('SIGTERM');
    if (!options.keepData) rmSync(dataDir, { recursive: true, force: true });
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const client = api(service.port);
  const legs: Leg[] = [];
  const summaries: ScenarioSummary[] = [];
  const windows: Record<string, Window[]> = {};
  // Per source: events acknowledged (2xx x events per request), and the most that may be stored
  // without an acknowledgement (requests in flight when a leg stopped: at most one per connection).
  const acknowledged = new Map<string, { events: number; inFlight: number }>();
  const acknowledge = (sourceId: string, events: number, eventsPerRequest: number) => {
    const entry = acknowledged.get(sourceId) ?? { events: 0, inFlight: 0 };
    entry.events += events;
    entry.inFlight += options.connections * eventsPerRequest;
    acknowledged.set(sourceId, entry);
  };
  let soakSummary: SoakSummary | undefined;
  let storedCheck: Report['storedCheck'] | undefined;
  let serviceMemory: Report['service'] | undefined;

  try {
    await serviceReady(service);
    await printedReady(bare);
    const soakScenario = all[0]!;
    for (const s of new Set([...selected, ...(options.soakMinutes > 0 ? [soakScenario] : [])])) {
      const res = await client.request('POST', '/event-source', {
        id: s.sourceId,
        name: `Benchmark ${s.name}`,
      });
      if (res.status !== 200) throw new Error(`POST /event-source: ${res.status} ${await res.text()}`);
      if (!acknowledged.has(s.sourceId)) acknowledged.set(s.sourceId, { events: 0, inFlight: 0 });
    }

    for (const scenario of selected) {
      const summary: ScenarioSummary = {
        name: scenario.name,
        description: scenario.description,
        eventsPerRequest: scenario.eventsPerRequest,
      };
      summaries.push(summary);
      const skipped = scenario.setup ? await scenario.setup(client) : undefined;
      if (skipped) {
        summary.skipped = skipped;
        console.log(`\n${scenario.name}: ${skipped}`);
        continue;
      }
      console.log(`\n${scenario.name}: ${scenario.description}`);
      try {
        if (options.warmup > 0) {
          for (const [target, child] of [
            ['service', service],
            ['bare', bare],
          ] as const) {
            const { leg } = await runLeg(scenario, child, target, 0, options, options.warmup);
            if (target === 'service')
              acknowledge(scenario.sourceId, leg.ok * scenario.eventsPerRequest, scenario.eventsPerRequest);
            console.log(`  warm-up ${target.padEnd(7)} ${fmt(leg.requestsPerSec)} requests/s`);
          }
        }
        const byTarget: Record<'service' | 'bare', Leg[]> = { service: [], bare: [] };
        for (let round = 1; round <= options.rounds; round++) {
          for (const [target, child] of [
            ['service', service],
            ['bare', bare],
          ] as const) {
            const { leg, window } = await runLeg(scenario, child, target, round, options, options.duration);
            legs.push(leg);
            byTarget[target].push(leg);
            if (target === 'service') {
              acknowledge(scenario.sourceId, leg.ok * scenario.eventsPerRequest, scenario.eventsPerRequest);
              (windows[scenario.name] ??= []).push(window);
            }
            const codes = leg.non2xx ? ` ${JSON.stringify(leg.statusCodes)}` : '';
            console.log(
              `  round ${round} ${target.padEnd(7)} ${fmt(leg.requestsPerSec).padStart(7)} requests/s` +
                ` ${fmt(leg.eventsPerSec).padStart(9)} events/s  p50 ${leg.latencyMs.p50} ms  p99 ${leg.latencyMs.p99} ms` +
                `  non-2xx ${leg.non2xx}${codes}  errors ${leg.errors}  RSS ${leg.rssPeakMb} MB` +
                (leg.cpu
                  ? `  CPU ${leg.cpu.serverUsPerRequest} µs/request (load generator ${leg.cpu.loadUsPerRequest})` +
                    `  machine ${leg.cpu.machineBusyPercent}% busy`
                  : ''),
            );
          }
        }
        summary.service = summarizeLegs(byTarget.service);
        summary.bare = summarizeLegs(byTarget.bare);
        summary.ratio = round2(summary.service.requestsPerSec / summary.bare.requestsPerSec);
        summary.ratiosPerRound = byTarget.service.map((l, i) =>
          round2(l.requestsPerSec / byTarget.bare[i]!.requestsPerSec),
        );
        summary.targets = checks(summary);
      } finally {
        await scenario.teardown?.(client);
      }
    }

    if (options.soakMinutes > 0) {
      const measured = summaries.find((s) => s.name === soakScenario.name)?.service?.requestsPerSec;
      let peak = measured ?? 0;
      if (!peak) {
        console.log(`\nsoak: measuring the peak rate of ${soakScenario.name} first`);
        const { leg } = await runLeg(soakScenario, service, 'service', 0, options, options.duration);
        acknowledge(soakScenario.sourceId, leg.ok, 1);
        peak = leg.requestsPerSec;
      }
      soakSummary = await soak(
        soakScenario,
        service,
        Math.max(1, Math.round(peak / 2)),
        options.soakMinutes,
        options.connections,
      );
      acknowledge(soakScenario.sourceId, soakSummary.ok, 1);
    }

    console.log('\ncounting stored events through GET /events …');
    const countStarted = Date.now();
    const perSource: Report['storedCheck']['perSource'] = [];
    for (const [sourceId, acked] of acknowledged) {
      const maxPages = Math.ceil((acked.events + acked.inFlight) / 1000) * 2 + 10;
      const { count, pages, error } = await countStored(client, sourceId, maxPages);
      perSource.push({
        sourceId,
        acknowledged: acked.events,
        maxUnacknowledged: acked.inFlight,
        stored: count,
        pages,
        ...(error ? { error } : {}),
      });
    }
    storedCheck = {
      // Requests still in flight when a leg ends may be stored without being counted as acknowledged;
      // more than that would mean events stored twice.
      ok: perSource.every(
        (p) => !p.error && p.stored >= p.acknowledged && p.stored - p.acknowledged <= p.maxUnacknowledged,
      ),
      acknowledged: sum(perSource.map((p) => p.acknowledged)),
      stored: sum(perSource.map((p) => p.stored)),
      countSeconds: round1((Date.now() - countStarted) / 1000),
      perSource,
    };
    const m = memory(service.pid);
    serviceMemory = { rssEndMb: round1(m?.rss ?? NaN), rssHwmMb: round1(m?.hwm ?? NaN), logLines: 0 };
  } finally {
    await Promise.all(children.map(stopChild));
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    if (!options.keepData) rmSync(dataDir, { recursive: true, force: true });
    else console.log(`data folder kept: ${dataDir}`);
  }

  let cpuProfile: Report['cpuProfile'];
  if (options.cpuProf) {
    const threads = profileThreads(profileDir);
    if (threads.length > 0) {
      cpuProfile = {};
      for (const { label, file } of threads) {
        const relative = `bench/results/${basename(profileDir)}/${basename(file)}`;
        const entry: NonNullable<Report['cpuProfile']>[string] = { file: relative, scenarios: {} };
        for (const [name, w] of Object.entries(windows)) {
          const p = summarizeProfile(file, w);
          p.file = relative;
          entry.scenarios[name] = p;
          printProfile(`${name}, ${label} thread, service legs only`, p);
        }
        cpuProfile[label] = entry;
        console.log(
          `\nprofile of the ${label} thread: ${relative} (Chrome DevTools › Performance, or speedscope)`,
        );
      }
    } else {
      console.log(`\nno CPU profile was written (${profileDir})`);
    }
  }

  const report: Report = {
    date: date.toISOString(),
    command,
    revision: rev,
    machine: info,
    note: NOTE,
    connections: options.connections,
    durationSec: options.duration,
    rounds: options.rounds,
    warmupSec: options.warmup,
    scenarios: summaries,
    legs,
    soak: soakSummary,
    storedCheck: storedCheck!,
    service: { ...serviceMemory!, logLines: service.logLines },
    cpuProfile,
  };

  printTable(summaries);
  console.log(`\n${NOTE}`);
  for (const s of summaries)
    for (const t of s.targets ?? [])
      console.log(`  ${t.pass ? 'PASS' : 'MISS'}  ${s.name}: ${t.target} (${t.value})`);
  if (soakSummary) {
    const s = soakSummary;
    console.log(
      `  ${s.flat ? 'PASS' : 'MISS'}  soak: flat RSS (start ${s.rssStartMb} MB, end ${s.rssEndMb} MB, max ${s.rssMaxMb} MB, ` +
        `${s.rssGrowthPercent}%); ${fmt(s.requestsPerSec)} requests/s, p99 ${s.p99Ms} ms, non-2xx ${s.non2xx}`,
    );
  }
  if (service.logLines > 0)
    console.log(`\nservice logged ${service.logLines} lines at warn or above (bench/results/service.log)`);

  const check = report.storedCheck;
  for (const p of check.perSource) {
    const diff = p.stored - p.acknowledged;
    const verdict = p.error
      ? `FAILED: ${p.error}`
      : diff < 0
        ? `MISSING ${fmt(-diff)}`
        : diff > p.maxUnacknowledged
          ? `${fmt(diff)} MORE than acknowledged: more than the requests in flight could explain (duplicates?)`
          : diff > 0
            ? `OK (+${fmt(diff)} from requests in flight when a leg stopped)`
            : 'OK';
    console.log(
      `stored ${p.sourceId}: ${fmt(p.acknowledged)} acknowledged, ${fmt(p.stored)} stored: ${verdict}`,
    );
  }
  console.log(
    `stored-count check: ${check.ok ? 'OK' : 'FAILED'} (${fmt(check.acknowledged)} acknowledged, ` +
      `${fmt(check.stored)} stored; counted in ${check.countSeconds} s)`,
  );

  const json = `${JSON.stringify(report, null, 2)}\n`;
  writeFileSync(join(RESULTS, `${stamp}.json`), json);
  writeFileSync(join(RESULTS, 'latest.json'), json);
  console.log(`\nresults: bench/results/${stamp}.json, bench/results/latest.json`);
  if (options.readme) {
    await writeReadme(markdown(report));
    console.log('README.md: benchmark section updated');
  }

  // Scale-out: the embedded store against PostgreSQL with 1, 2 and 4 collector processes, same run.
  let postgresOk = true;
  if (options.postgres) {
    console.log(
      '\nPostgreSQL: embedded store, then PostgreSQL with 1, 2 and 4 collector processes (1 event per request)',
    );
    const pgRun = await runPostgresBench({
      duration: options.duration,
      connections: options.connections,
      events: 1,
      workers: [1, 2, 4],
    });
    const command = `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim();
    writeFileSync(
      join(RESULTS, 'postgres-latest.json'),
      `${JSON.stringify({ date: new Date().toISOString(), command, legs: pgRun.legs, lost: pgRun.lost }, null, 2)}\n`,
    );
    if (options.readme) writePostgresReadme(postgresMarkdown(pgRun.legs, command, 1));
    postgresOk = pgRun.lost === 0;
    console.log(
      postgresOk
        ? 'PostgreSQL stored-count check: OK'
        : `PostgreSQL stored-count check: ${pgRun.lost} events MISSING`,
    );
  }
  return check.ok && postgresOk ? 0 : 1;
}

const round2 = (n: number) => Math.round(n * 100) / 100;

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(2);
  },
);
