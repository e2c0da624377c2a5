/**
 * `npm run bench:trust`: what duplicate detection and enrichment cost `POST /track`. Drives in turn,
 * with the load of `npm run bench` (bench/targets.ts):
 *   bare                        the bare server
 *   service, first visit        the collector as shipped (TRACK_ENRICH on): a first visit as the
 *                               browser tracker sends it (a client event id, `timestamp`, `sent_at`)
 *                               with a desktop Chrome User-Agent
 *   service, returning          the same collector: the returning-visitor scenario's requests, with
 *                               client event ids as the browser tracker makes them (UUID version 7)
 *   service, returning, random ids   the same with random client event ids (UUID version 4), as
 *                               many other clients send them
 *   plain, first visit          a second collector with TRACK_ENRICH=no, the same first visit
 *                               without the client event id (so no duplicate check), with its times
 *   plain, returning            that collector, returning visitors without client event ids
 * and prints the ratios of each pair. Embedded store, fresh data folders. `--runs n` repeats all of
 * it n times with fresh processes (which collector starts first turns each run) and prints the mean
 * and spread: two processes of one build can differ by more than the effect measured. Writes
 * bench/results/trust-latest.json. See bench/README.md.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mean, round2, sum } from './numbers.js';
import { trustOptions, type LegOptions } from './options.js';
import { CHROME_USER_AGENT, oneEvent, oneTrackedEvent, returningVisit } from './payloads.js';
import { RESULTS, revision, stopChild, stopOnSignal, type Child } from './processes.js';
import { firstVisits } from './scenarios.js';
import { driveTargets, startTarget, type Target } from './targets.js';

const SOURCE = 'bench-trust';
const VISITORS = 2_000;
const headers = { 'user-agent': CHROME_USER_AGENT };

/** Each ratio to the bare server with ids and enrichment, divided by the one without. */
interface Effect {
  firstVisit: number;
  returning: number;
  returningRandomIds: number;
}

/** One run: fresh processes and data folders, every target driven `rounds` times. */
async function oneRun(run: number, legOptions: LegOptions, started: Child[], dir: string) {
  const bare = await startTarget.server(`trust-bare-${run}`, 'bench/bare-server.ts', {}, started);
  const targets: Target[] = [{ name: 'bare', child: bare, body: oneEvent(SOURCE), headers, answered: 0 }];
  const collectors = [
    ['service', 'yes', 'ordered'],
    ['plain', 'no', 'none'],
  ] as const;
  // Which collector starts first turns with each run, so neither keeps the same place.
  for (const [label, enrich, ids] of run % 2 ? collectors : [...collectors].reverse()) {
    const env = {
      TRACK_DATA_DIR: join(dir, `${label}-${run}`),
      DATABASE_URL: '',
      TRACK_WORKERS: '',
      TRACK_ENRICH: enrich,
    };
    const child = await startTarget.service(`trust-${label}-${run}`, env, started, SOURCE);
    const visitors = await firstVisits(child, SOURCE, VISITORS, headers);
    const first = oneTrackedEvent(SOURCE, ids);
    targets.push(
      { name: `${label}, first visit`, child, body: first, headers, answered: 0 },
      {
        name: `${label}, returning`,
        child,
        body: returningVisit(SOURCE, visitors, ids),
        headers,
        answered: 0,
      },
    );
    if (ids === 'ordered') {
      const body = returningVisit(SOURCE, visitors, 'random');
      targets.push({ name: `${label}, returning, random ids`, child, body, headers, answered: 0 });
    }
  }
  targets.sort((a, b) => order(a.name) - order(b.name));
  const { legs, summary, wrong } = await driveTargets(targets, legOptions);
  const ratio = (name: string) => summary.find((s) => s.target === name)!.ratio;
  const effect: Effect = {
    firstVisit: round2(ratio('service, first visit') / ratio('plain, first visit')),
    returning: round2(ratio('service, returning') / ratio('plain, returning')),
    returningRandomIds: round2(ratio('service, returning, random ids') / ratio('plain, returning')),
  };
  await Promise.all(started.splice(0).map(stopChild));
  return { effect, summary, legs, wrong };
}

/** The targets in the same order in every run, whichever collector started first. */
const ORDER = ['bare', 'service, first visit', 'service, returning', 'service, returning, random ids'];
const order = (name: string) =>
  ORDER.includes(name) ? ORDER.indexOf(name) : ORDER.length + (name.includes('returning') ? 1 : 0);

function describe(effect: Effect): string {
  return `first visit ${effect.firstVisit}, returning ${effect.returning} (${effect.returningRandomIds} with random ids)`;
}

/** Mean and sample standard deviation, two decimals. */
function spread(values: number[]) {
  const m = mean(values);
  const sd = values.length > 1 ? Math.sqrt(sum(values.map((v) => (v - m) ** 2)) / (values.length - 1)) : 0;
  return { mean: round2(m), sd: round2(sd) };
}

async function main(): Promise<number> {
  const { runs, ...legOptions } = trustOptions();
  mkdirSync(RESULTS, { recursive: true });
  const dir = mkdtempSync(join(tmpdir(), 'collector-trust-'));
  const started: Child[] = [];
  const removeHandlers = stopOnSignal(started, () => rmSync(dir, { recursive: true, force: true }));
  try {
    const rev = revision();
    const { seconds, rounds, connections } = legOptions;
    console.log(
      `service at ${rev}; ${connections} connections, ${seconds} s per leg, ${rounds} rounds, ${runs} run(s)`,
    );
    const results = [];
    for (let run = 1; run <= runs; run++) {
      if (runs > 1) console.log(`\nrun ${run} of ${runs}`);
      const result = await oneRun(run, legOptions, started, dir);
      console.log(`\nwith ids and enrichment, of the figure without: ${describe(result.effect)}`);
      if (result.wrong.length) {
        console.error(`\n${result.wrong.join('\n')}\nbench/results/trust-latest.json not written`);
        return 1;
      }
      results.push(result);
    }
    const effects = results.map((r) => r.effect);
    const across = {
      firstVisit: spread(effects.map((e) => e.firstVisit)),
      returning: spread(effects.map((e) => e.returning)),
      returningRandomIds: spread(effects.map((e) => e.returningRandomIds)),
    };
    const effect: Effect = {
      firstVisit: across.firstVisit.mean,
      returning: across.returning.mean,
      returningRandomIds: across.returningRandomIds.mean,
    };
    if (runs > 1) {
      const line = (name: keyof Effect) =>
        `  ${name}: ${effects.map((e) => e[name]).join(', ')}; mean ${across[name].mean}, sd ${across[name].sd}`;
      console.log(
        `\nover ${runs} runs:\n${line('firstVisit')}\n${line('returning')}\n${line('returningRandomIds')}`,
      );
    }
    const report = {
      date: new Date().toISOString(),
      revision: rev,
      connections,
      seconds,
      rounds,
      runs,
      effect,
      spread: across,
      results,
    };
    writeFileSync(join(RESULTS, 'trust-latest.json'), JSON.stringify(report, null, 2) + '\n');
    console.log('bench/results/trust-latest.json written');
    return 0;
  } finally {
    await Promise.all(started.map(stopChild));
    removeHandlers();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
