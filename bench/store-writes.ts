/**
 * Micro-benchmark of the embedded store's write path, outside HTTP and threads: the CPU time of the
 * write transactions (a new session, a new profile and the events of one request; many requests
 * per transaction, as the group commit does), for the layout of one row per event that the store
 * had before event runs, and for the store's own write path now (src/storage/sqlite/writes.ts, with
 * rows made by src/storage/sqlite/rows.ts). CPU time (user + system) rather than wall time, so that
 * other load on the machine disturbs the figures less. It backs bench/README.md.
 *
 *   npx tsx bench/store-writes.ts [--reps 3]
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { timeOrderedId } from '../src/domain/ids.js';
import type { EventRecord, WriteSet } from '../src/model/records.js';
import { newProfile } from '../src/model/profiles.js';
import { migrations } from '../src/storage/sqlite/migrations.js';
import { toRow } from '../src/storage/sqlite/write-set.js';
import { configureWriter, migrate } from '../src/storage/sqlite/connection.js';
import { prepareWrites } from '../src/storage/sqlite/writes.js';
import { median } from './numbers.js';
import { numberOption } from './options.js';
import { CHROME_USER_AGENT } from './payloads.js';

const context = {
  browser: {
    local: {
      browser: {
        name: 'chrome',
        userAgent: CHROME_USER_AGENT,
        language: 'en-US',
      },
    },
  },
  screen: { local: { width: 1920, height: 1080, colorDepth: 24 } },
};
const page = { page: { url: 'https://shop.example.com/products/42', path: '/products/42', title: 'Shop' } };
const TYPES = ['page-view', 'product-view', 'add-to-cart', 'scroll'];

/** The write set of a first visit: a new session (the client's random id), a new profile, events. */
function firstVisit(eventsPerRequest: number): WriteSet {
  const now = new Date().toISOString();
  const sessionId = randomUUID();
  const profile = newProfile(timeOrderedId(), now);
  const events: EventRecord[] = Array.from({ length: eventsPerRequest }, (_, i) => ({
    id: timeOrderedId(),
    type: TYPES[i % TYPES.length]!,
    properties:
      eventsPerRequest === 1 ? { path: '/products/42' } : { position: i, price: 1.99, sku: `sku-${i}` },
    context: eventsPerRequest === 1 ? { ...context, ...page } : {},
    source: { id: 'web' },
    session: { id: sessionId },
    profile: { id: profile.id },
    metadata: { time: { insert: now }, ip: '127.0.0.1', status: 'collected', profile_less: false },
  }));
  return {
    session: {
      record: {
        id: sessionId,
        profile: { id: profile.id },
        metadata: { time: { insert: now, update: now } },
        context,
        properties: {},
      },
      expectVersion: null,
    },
    profile: { op: 'create', record: profile },
    events,
  };
}

interface Layout {
  name: string;
  /**
   * Prepares an empty database. Returns what the service thread does to a batch (turning records
   * into JSON text and column values; not counted) and the write transaction (counted).
   */
  open(db: Database.Database): { prepare(batch: WriteSet[]): unknown; write(prepared: unknown): void };
}

const layouts: Layout[] = [
  {
    name: 'one row per event (before event runs): 7 b-trees per event, session index by random id',
    open(db) {
      for (const sql of migrations.slice(0, 2)) db.exec(sql);
      const session = db.prepare(
        'INSERT INTO sessions (id, profile_id, version, doc) VALUES (?, ?, 1, ?) ON CONFLICT (id) DO NOTHING',
      );
      const profile = db.prepare('INSERT INTO profiles (id, doc) VALUES (?, ?)');
      const event = db.prepare(
        'INSERT INTO events (id, insert_time, type, source_id, session_id, profile_id, doc) VALUES (?, ?, ?, ?, ?, ?, ?)',
      );
      type Columns = unknown[];
      const prepare = (batch: WriteSet[]) =>
        batch.map((ws) => {
          const s = ws.session!.record;
          const p = ws.profile!.op === 'create' ? ws.profile!.record : null;
          const events = ws.events.map((e): Columns => {
            const keys = [e.id, e.metadata.time.insert, e.type, e.source.id, e.session?.id, e.profile?.id];
            return [...keys, JSON.stringify(e)];
          });
          return {
            session: [s.id, s.profile?.id ?? null, JSON.stringify(s)],
            profile: [p!.id, JSON.stringify(p)],
            events,
          };
        });
      const write = db.transaction((rows: ReturnType<typeof prepare>) => {
        for (const row of rows) {
          session.run(row.session);
          profile.run(row.profile);
          for (const columns of row.events) event.run(columns);
        }
      });
      return { prepare, write: (prepared) => write(prepared as ReturnType<typeof prepare>) };
    },
  },
  {
    name: 'event runs (now): one row per request, session index by session seq',
    open(db) {
      migrate(db);
      const writes = prepareWrites(db, true);
      return {
        prepare: (batch) => batch.map(toRow),
        write: (prepared) => void writes.commit(prepared as ReturnType<typeof toRow>[]),
      };
    },
  },
];

function measure(layout: Layout, eventsPerRequest: number, requests: number, batch: number): number {
  const dir = mkdtempSync(join(tmpdir(), 'collector-store-bench-'));
  const db = new Database(join(dir, 'collector.db'));
  try {
    configureWriter(db, 'normal');
    const { prepare, write } = layout.open(db);
    let used = 0;
    for (let done = 0; done < requests; done += batch) {
      const prepared = prepare(Array.from({ length: batch }, () => firstVisit(eventsPerRequest)));
      const started = process.cpuUsage();
      write(prepared);
      const cpu = process.cpuUsage(started);
      used += cpu.user + cpu.system;
      // The checkpointer's work happens elsewhere; keep the log from growing over the run.
      if ((done / batch) % 50 === 49) db.pragma('wal_checkpoint(TRUNCATE)');
    }
    return used / requests;
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function main() {
  const { values } = parseArgs({ options: { reps: { type: 'string', default: '3' } } });
  const reps = Math.round(numberOption('reps', values.reps, 1));
  const shapes = [
    { name: '1 event per request (48 requests per transaction)', events: 1, requests: 30_000, batch: 48 },
    { name: '100 events per request (16 requests per transaction)', events: 100, requests: 1_600, batch: 16 },
  ];
  console.log(
    `store write cost, median of ${reps} runs (CPU µs, user + system, of the write transactions per request / per event)`,
  );
  for (const shape of shapes) {
    console.log(`\n${shape.name}`);
    for (const layout of layouts) {
      const runs = Array.from({ length: reps }, () =>
        measure(layout, shape.events, shape.requests, shape.batch),
      );
      const perRequest = median(runs);
      console.log(
        `  ${perRequest.toFixed(0).padStart(6)} µs/request ${(perRequest / shape.events).toFixed(1).padStart(7)} µs/event  ${layout.name}`,
      );
    }
  }
}

main();
