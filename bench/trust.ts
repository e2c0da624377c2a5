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
 * and prints the ratios of each pair. Embedded store, fresh data folders. Writes
 * bench/results/trust-latest.json. See bench/README.md.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { round2 } from './numbers.js';
import { legOptions } from './options.js';
import { CHROME_USER_AGENT, oneEvent, oneTrackedEvent, returningVisit } from './payloads.js';
import { RESULTS, revision, stopChild, stopOnSignal, type Child } from './processes.js';
import { firstVisits } from './scenarios.js';
import { driveTargets, startTarget, type Target } from './targets.js';

const SOURCE = 'bench-trust';
const VISITORS = 2_000;
const headers = { 'user-agent': CHROME_USER_AGENT };

async function main(): Promise<number> {
  const { seconds, rounds, connections } = legOptions();
  mkdirSync(RESULTS, { recursive: true });
  const dir = mkdtempSync(join(tmpdir(), 'collector-trust-'));
  const started: Child[] = [];
  const removeHandlers = stopOnSignal(started, () => rmSync(dir, { recursive: true, force: true }));
  try {
    const bare = await startTarget.server('trust-bare', 'bench/bare-server.ts', {}, started);
    const targets: Target[] = [{ name: 'bare', child: bare, body: oneEvent(SOURCE), headers, answered: 0 }];
    for (const [label, enrich, ids] of [
      ['service', 'yes', 'ordered'],
      ['plain', 'no', 'none'],
    ] as const) {
      const env = {
        TRACK_DATA_DIR: join(dir, label),
        DATABASE_URL: '',
        TRACK_WORKERS: '',
        TRACK_ENRICH: enrich,
      };
      const child = await startTarget.service(`trust-${label}`, env, started, SOURCE);
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
    const rev = revision();
    console.log(`service at ${rev}; ${connections} connections, ${seconds} s per leg, ${rounds} rounds`);
    const { legs, summary, wrong } = await driveTargets(targets, { seconds, rounds, connections });
    const ratio = (name: string) => summary.find((s) => s.target === name)!.ratio;
    const effect = {
      firstVisit: round2(ratio('service, first visit') / ratio('plain, first visit')),
      returning: round2(ratio('service, returning') / ratio('plain, returning')),
      returningRandomIds: round2(ratio('service, returning, random ids') / ratio('plain, returning')),
    };
    console.log(
      `\nwith ids and enrichment, of the figure without: first visit ${effect.firstVisit}, returning ${effect.returning}` +
        ` (${effect.returningRandomIds} with random ids)`,
    );
    if (wrong.length) {
      console.error(`\n${wrong.join('\n')}\nbench/results/trust-latest.json not written`);
      return 1;
    }
    const report = {
      date: new Date().toISOString(),
      revision: rev,
      connections,
      seconds,
      rounds,
      effect,
      summary,
      legs,
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
