/**
 * `npm run bench:delivery`: what one destination receiving every event costs `POST /track`, and how
 * fast delivery keeps up. Three servers in turn under the 1-event scenario (the order turning each round): the service
 * without destinations, the service with one enabled destination (a local receiver answering 200 at
 * once, bench/delivery-receiver.ts) and the bare server. Prints requests/s, the ratio of each service
 * to the bare server, the delivering service's ratio over the plain one's, events/s delivered during
 * the load, the delivery lag (stored → received) and how long `pending` takes to reach 0 once the load
 * stops. See bench/README.md.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { legLine, runLeg, type Leg } from './leg.js';
import { legOptions } from './options.js';
import { oneEvent } from './payloads.js';
import {
  apiJson,
  createSource,
  HOST,
  printedReady,
  RESULTS,
  revision,
  serviceReady,
  spawnBenchServer,
  spawnService,
  stopChild,
  stopOnSignal,
  type Child,
} from './processes.js';

const { seconds, rounds, connections } = legOptions();

interface Stats {
  events: number;
  requests: number;
  firstAt: number;
  lastAt: number;
  lagMs: { p50: number; p99: number; max: number };
}

const stats = async (receiver: Child): Promise<Stats> =>
  (await (await fetch(`http://${HOST}:${receiver.port}/stats`)).json()) as Stats;

const mean = (legs: Leg[]) => legs.reduce((sum, leg) => sum + leg.requestsPerSec, 0) / legs.length;

async function pending(service: Child): Promise<number> {
  return (await apiJson<{ status: { pending: number } }>(service, 'GET', '/destination/bench')).status
    .pending;
}

async function main(): Promise<void> {
  mkdirSync(RESULTS, { recursive: true });
  const dirs = [
    mkdtempSync(join(tmpdir(), 'bench-plain-')),
    mkdtempSync(join(tmpdir(), 'bench-delivering-')),
  ];
  const children: Child[] = [];
  const cleanup = () => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true }));
  const removeHandlers = stopOnSignal(children, cleanup);
  try {
    const plain = await spawnService('plain', { TRACK_DATA_DIR: dirs[0]! }, RESULTS);
    const delivering = await spawnService('delivering', { TRACK_DATA_DIR: dirs[1]! }, RESULTS);
    const bare = await spawnBenchServer('bare', 'bench/bare-server.ts', {}, RESULTS);
    const receiver = await spawnBenchServer('receiver', 'bench/delivery-receiver.ts', {}, RESULTS);
    children.push(plain, delivering, bare, receiver);
    await Promise.all([
      serviceReady(plain),
      serviceReady(delivering),
      printedReady(bare),
      printedReady(receiver),
    ]);
    for (const service of [plain, delivering]) await createSource(service, 'bench', 'Benchmark');
    await apiJson(delivering, 'POST', '/destination', {
      id: 'bench',
      url: `http://${HOST}:${receiver.port}/hook`,
    });
    const work = { scenario: '1-event', eventsPerRequest: 1, body: oneEvent('bench') };
    const legs: Record<string, Leg[]> = { plain: [], delivering: [], bare: [] };
    const delivery: { eventsPerSec: number; drainMs: number; lagP50Ms: number; lagP99Ms: number }[] = [];
    console.log(
      `npm run bench:delivery at ${revision()}: ${rounds} rounds of ${seconds} s, ${connections} connections`,
    );
    for (let round = 1; round <= rounds; round++) {
      // The order turns by one each round, so that no server always follows the same one.
      const order = [
        ['plain', plain],
        ['delivering', delivering],
        ['bare', bare],
      ] as const;
      for (let k = 0; k < order.length; k++) {
        const [name, child] = order[(k + round - 1) % order.length]!;
        if (name === 'delivering') await fetch(`http://${HOST}:${receiver.port}/reset`, { method: 'POST' });
        const started = Date.now();
        const { leg } = await runLeg(
          work,
          child,
          name === 'bare' ? 'bare' : 'service',
          round,
          connections,
          seconds,
        );
        const ended = Date.now();
        legs[name]!.push(leg);
        console.log(legLine(leg).replace(/ (service|bare) /, ` ${name.padEnd(10)} `));
        if (name !== 'delivering') continue;
        const during = await stats(receiver);
        while ((await pending(delivering)) > 0) await new Promise((ok) => setTimeout(ok, 50));
        const drainMs = Date.now() - ended;
        const after = await stats(receiver);
        const entry = {
          eventsPerSec: Math.round(during.events / ((ended - started) / 1000)),
          drainMs,
          lagP50Ms: after.lagMs.p50,
          lagP99Ms: after.lagMs.p99,
        };
        delivery.push(entry);
        console.log(
          `  delivered ${entry.eventsPerSec} events/s during the load, ${after.events} in all ` +
            `(${after.requests} requests); pending 0 ${(drainMs / 1000).toFixed(1)} s after the load; ` +
            `lag p50 ${entry.lagP50Ms} ms, p99 ${entry.lagP99Ms} ms`,
        );
      }
    }
    const ratio = (name: string) => mean(legs[name]!) / mean(legs.bare!);
    const summary = {
      plainRatio: Number(ratio('plain').toFixed(3)),
      deliveringRatio: Number(ratio('delivering').toFixed(3)),
      deliveringOverPlain: Number((ratio('delivering') / ratio('plain')).toFixed(3)),
      worstDrainSec: Math.max(...delivery.map((d) => d.drainMs)) / 1000,
      worstLagP99Ms: Math.max(...delivery.map((d) => d.lagP99Ms)),
    };
    console.log(
      `\n1-event ratio to the bare server: ${summary.plainRatio} without destinations, ` +
        `${summary.deliveringRatio} with one (${summary.deliveringOverPlain} of it); ` +
        `pending 0 within ${summary.worstDrainSec} s; lag p99 at most ${summary.worstLagP99Ms} ms`,
    );
    const file = join(RESULTS, `delivery-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    writeFileSync(
      file,
      JSON.stringify(
        { revision: revision(), seconds, rounds, connections, legs, delivery, summary },
        null,
        2,
      ),
    );
    console.log(`results: ${file}`);
  } finally {
    await Promise.all(children.map(stopChild));
    removeHandlers();
    cleanup();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exit(2);
});
