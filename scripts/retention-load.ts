/**
 * How much a retention pass costs the requests it runs beside: seeds the embedded store with
 * EVENTS old events (default 1,000,000, one per request as the browser tracker sends them), then
 * measures POST /track latency at a fixed rate twice, on the built service (`npm run build` first):
 * without retention, then with TRACK_EVENT_RETENTION_DAYS while its pass deletes all of them.
 *
 *   npm run build && npx tsx scripts/retention-load.ts [events] [requests/s]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import type { EventRecord, WriteSet } from '../src/model/records.js';
import { SqliteStore } from '../src/storage/sqlite/store.js';

const EVENTS = Number(process.argv[2] ?? 1_000_000);
const RATE = Number(process.argv[3] ?? 2000);
const TOKEN = 'retention-load';
const DAY = 86_400_000;
const PORT = 28_000 + Math.floor(Math.random() * 1000);
const base = `http://127.0.0.1:${PORT}`;
const dataDir = mkdtempSync(join(tmpdir(), 'retention-load-'));

async function seed(): Promise<void> {
  const store = new SqliteStore({ dataDir, sync: 'normal', writeQueueLimit: 1_000_000 });
  await store.open();
  const start = Date.now() - 40 * DAY;
  const context = { page: { url: 'https://shop.example/products/42', title: 'Product 42', referrer: '' } };
  const perWriteSet = 200;
  let pending: Promise<unknown>[] = [];
  for (let i = 0; i < EVENTS; i += perWriteSet) {
    const events: EventRecord[] = [];
    for (let k = i; k < Math.min(EVENTS, i + perWriteSet); k++) {
      events.push({
        id: `old-${k}`,
        type: k % 5 === 0 ? 'add-to-cart' : 'page-view',
        properties: { path: `/p/${k % 1000}` },
        context,
        source: { id: 'web' },
        session: { id: `old-session-${k % 50_000}` },
        profile: { id: `old-profile-${k % 50_000}` },
        // A millisecond apart: each event is a run of its own, as one request per event makes.
        metadata: {
          time: { insert: new Date(start + k).toISOString() },
          ip: null,
          status: 'collected',
          profile_less: false,
        },
      });
    }
    pending.push(store.commit({ events } satisfies WriteSet));
    if (pending.length >= 50) {
      await Promise.all(pending);
      pending = [];
    }
  }
  await Promise.all(pending);
  await store.close();
}

function serve(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['dist/server.js'], {
    env: {
      ...process.env,
      PORT: String(PORT),
      TRACK_DATA_DIR: dataDir,
      TRACK_API_TOKEN: TOKEN,
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    const poll = async () => {
      if (child.exitCode !== null) return reject(new Error('the service exited'));
      const ok = await fetch(`${base}/health`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) resolve(child);
      else setTimeout(poll, 100);
    };
    void poll();
  });
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

async function expired(): Promise<number> {
  const text = await (
    await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
  ).text();
  return Number(/^collector_events_expired_total (\d+)/m.exec(text)?.[1] ?? 0);
}

/** Fixed-rate /track load (returning and new visitors) until `done` says so; the latency figures. */
async function load(done: () => Promise<boolean>, minSeconds: number) {
  let n = 0;
  const instance = autocannon({
    url: `${base}/track`,
    connections: 32,
    overallRate: RATE,
    duration: 3600,
    requests: [
      {
        method: 'POST',
        setupRequest: (request) => ({
          ...request,
          body: JSON.stringify({
            source: { id: 'web' },
            session: { id: `visitor-${n++ % 20_000}` },
            context: { page: { url: 'https://shop.example/' } },
            events: [{ type: 'page-view', properties: { n } }],
          }),
        }),
      },
    ],
  }) as unknown as autocannon.Instance & PromiseLike<autocannon.Result>;
  const started = Date.now();
  while (Date.now() - started < minSeconds * 1000 || !(await done())) {
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const seconds = (Date.now() - started) / 1000;
  instance.stop();
  const result = await instance;
  return {
    seconds: Math.round(seconds),
    requests: result.requests.total,
    non2xx: result.non2xx,
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
  };
}

async function main(): Promise<void> {
  console.log(`seeding ${EVENTS.toLocaleString()} events of 40 days ago…`);
  const t0 = Date.now();
  await seed();
  console.log(`seeded in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

  let service = await serve({});
  const created = await fetch(`${base}/event-source`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify({ id: 'web' }),
  });
  if (!created.ok) throw new Error(`source: ${created.status}`);
  const baseline = await load(async () => true, 30);
  console.log('without retention:', baseline);
  await stop(service);

  service = await serve({ TRACK_EVENT_RETENTION_DAYS: '30' });
  const during = await load(async () => (await expired()) >= EVENTS, 5);
  console.log(`with retention, while its pass deleted ${(await expired()).toLocaleString()} events:`, during);
  await stop(service);
  rmSync(dataDir, { recursive: true, force: true });
}

main().catch((error: unknown) => {
  console.error(error);
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(1);
});
