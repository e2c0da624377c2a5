/**
 * `npm run bench`: load test of POST /track against the service (`--store sqlite`, the embedded
 * store in a fresh data folder, or `--store postgres`) and, in the same run, against a bare Fastify
 * server that only parses the body (bench/bare-server.ts), alternately (A B A B), scenario by
 * scenario (bench/scenarios.ts). Prints and records requests/s, events/s, latency, non-2xx, peak
 * RSS, CPU and the ratio to the bare server, then checks through the read API that every
 * acknowledged event is stored. See bench/README.md.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { measureGroup, type Measured } from './measure.js';
import { memory } from './memory.js';
import { prefill } from './prefill.js';
import { round1 } from './numbers.js';
import { runOptions } from './options.js';
import { createSource, RESULTS, revision, ROOT, withDescendants } from './processes.js';
import { serviceProfiles, type Window } from './profile.js';
import { writeReadme } from './readme.js';
import { NOTE, printReport } from './report.js';
import { machine, readLatest, writeResults, type Report } from './results.js';
import { addRuleScenarios, checkKept } from './rules.js';
import { SCENARIOS, selectScenarios } from './scenarios.js';
import { startServers } from './servers.js';
import { soakAfter } from './soak.js';
import { checkStored, Ledger } from './stored.js';
import { openStore } from './stores.js';

async function main(): Promise<number> {
  const options = runOptions();
  if (options.readmeOnly) {
    await writeReadme(readLatest('sqlite'));
    console.log('README.md: benchmark section rewritten from bench/results/latest.json');
    return 0;
  }
  const scenarios = selectScenarios(options.scenarios);
  const groups = options.rules ? addRuleScenarios(scenarios) : scenarios.map((s) => [s]);
  const selected = groups.flat();
  const soakScenario = SCENARIOS[0]!;
  if (!existsSync(join(ROOT, 'dist', 'server.js')))
    throw new Error('dist/server.js is missing: npm run build');
  mkdirSync(RESULTS, { recursive: true });

  const date = new Date();
  const stamp = date.toISOString().replace(/[:.]/g, '-');
  const args = process.argv.slice(2);
  const command = `npm run bench${args.length ? ` -- ${args.join(' ')}` : ''}`;
  const info = machine();
  const rev = revision();
  console.log(`${command}\nservice at ${rev}; ${info.nproc} × ${info.cpu}, Node ${info.node}`);
  const store = await openStore(options.store, options.workers);
  const where = store.database ? ` (${store.database})` : '';
  console.log(`store: ${options.store}${where}, ${options.workers} collector process(es)\nnote: ${NOTE}`);

  // Node writes one profile per thread into this folder.
  const profileDir = join(RESULTS, `service-${stamp}-profiles`);
  const nodeArgs = options.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  if (options.prefill > 0) prefill(store.dataDir, options.prefill);
  const servers = await startServers(store, nodeArgs, options.keepData);
  const { service } = servers;
  const ledger = new Ledger(options.connections);
  const sourceOf = (name: string) => `bench-${name}${store.sourceSuffix}`;
  const measured: Measured[] = [];
  let soak: Report['soak'];
  let storedCheck: Report['storedCheck'];
  let memoryEnd: ReturnType<typeof memory>;
  try {
    for (const s of new Set([...selected, ...(options.soakMinutes > 0 ? [soakScenario] : [])])) {
      await createSource(service, sourceOf(s.name), `Benchmark ${s.name}`);
      ledger.open(sourceOf(s.name));
    }
    for (const group of groups)
      measured.push(...(await measureGroup(group, sourceOf, servers, options, ledger)));
    if (options.rules) checkKept(measured.map((m) => m.summary));
    if (options.soakMinutes > 0) {
      const plan = { ...options, minutes: options.soakMinutes };
      const summaries = measured.map((m) => m.summary);
      soak = await soakAfter(soakScenario, sourceOf(soakScenario.name), service, summaries, plan, ledger);
    }
    console.log('\ncounting stored events through GET /events …');
    storedCheck = await checkStored(service, ledger);
    memoryEnd = memory(withDescendants(service.pid));
  } finally {
    await servers.stop();
  }

  const windows: Record<string, Window[]> = {};
  for (const m of measured) windows[m.summary.name] = m.windows;
  const report: Report = {
    date: date.toISOString(),
    command,
    revision: rev,
    machine: info,
    note: NOTE,
    store: options.store,
    ...(store.database ? { database: store.database } : {}),
    workers: options.workers,
    connections: options.connections,
    ...(options.prefill > 0 ? { prefill: options.prefill } : {}),
    durationSec: options.duration,
    rounds: options.rounds,
    warmupSec: options.warmup,
    scenarios: measured.map((m) => m.summary),
    legs: measured.flatMap((m) => m.legs),
    soak,
    storedCheck,
    service: {
      rssEndMb: round1(memoryEnd?.rss ?? NaN),
      rssHwmMb: round1(memoryEnd?.hwm ?? NaN),
      logLines: service.logLines,
    },
    cpuProfile: options.cpuProf ? serviceProfiles(profileDir, windows) : undefined,
  };
  printReport(report);
  console.log(`\nresults: ${writeResults(report, stamp).join(', ')}`);
  if (options.readme && options.store === 'sqlite') {
    await writeReadme(report);
    console.log('README.md: benchmark section updated');
  }
  return storedCheck.ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(2);
  },
);
