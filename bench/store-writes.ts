/**
 * Micro-benchmark of the embedded store's write path, outside HTTP: the service's own migrations and
 * the statements of src/storage/sqlite/store.ts (a session, a profile and the events of one request;
 * many requests per transaction, as the group commit does). It starts from the write path before
 * commit 408f563 (a savepoint per write set, UUIDv4 ids, automatic checkpoints) and from the one
 * since, and changes one thing at a time. CPU time (user + system) is measured rather than wall time,
 * so other load on the machine disturbs the figures less. It backs bench/README.md.
 *
 *   npx tsx bench/store-writes.ts [--reps 3]
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { migrations } from '../src/storage/sqlite/migrations.js';

let counter = 0;
/** A time-ordered UUID (version 7): 48-bit milliseconds, a 12-bit counter, random bits. */
export function uuidv7(): string {
  const hex = Date.now().toString(16).padStart(12, '0');
  const seq = (counter++ & 0xfff).toString(16).padStart(3, '0');
  const rand = randomBytes(8);
  rand[0] = (rand[0]! & 0x3f) | 0x80;
  const r = rand.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8)}-7${seq}-${r.slice(0, 4)}-${r.slice(4)}`;
}

const context = JSON.stringify({
  browser: {
    local: {
      browser: {
        name: 'chrome',
        userAgent:
          'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36',
        language: 'en-US',
      },
    },
  },
  screen: { local: { width: 1920, height: 1080, colorDepth: 24 } },
  page: { url: 'https://shop.example.com/products/42', path: '/products/42', title: 'Shop' },
});
const smallEvent = '{"type":"page-view","properties":{"path":"/p","position":1,"price":1.99,"sku":"sku-1"}}';

interface Variant {
  name: string;
  /** Id generator for server-made ids (profiles, events); sessions keep the client's random UUIDs. */
  ids?: () => string;
  sessionIds?: () => string;
  savepoint?: boolean;
  pragmas?: string[];
  dropIndexes?: string[];
}

const ALL_SECONDARY = [
  'events_time',
  'events_profile',
  'events_session',
  'events_type',
  'events_source',
  'sessions_profile',
];

/** What the write path does since commit 408f563 (the starting point of the last variants). */
const current: Variant = {
  name: '',
  ids: uuidv7,
  savepoint: false,
  pragmas: ['temp_store = MEMORY', 'wal_autocheckpoint = 0'],
};

const variants: Variant[] = [
  { name: 'before 408f563: savepoint per write set, UUIDv4 ids, automatic checkpoints' },
  { name: '  + time-ordered ids (UUIDv7) for events and profiles', ids: uuidv7 },
  { name: '  + no savepoint per write set', savepoint: false },
  { name: '  + temp_store = MEMORY (savepoint journals in memory)', pragmas: ['temp_store = MEMORY'] },
  { name: '  + cache_size 64 MB (default 2 MB)', pragmas: ['cache_size = -65536'] },
  { name: '  + no automatic checkpoint during writes', pragmas: ['wal_autocheckpoint = 0'] },
  { ...current, name: 'since 408f563: UUIDv7, no savepoint, temp_store = MEMORY, no automatic checkpoint' },
  {
    ...current,
    name: '  + without events_type and events_source indexes',
    dropIndexes: ['events_type', 'events_source'],
  },
  { ...current, name: '  + without any secondary index (lower bound)', dropIndexes: ALL_SECONDARY },
];

function measure(variant: Variant, eventsPerRequest: number, requests: number, batch: number): number {
  const dir = mkdtempSync(join(tmpdir(), 'collector-store-bench-'));
  const db = new Database(join(dir, 'collector.db'));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    for (const pragma of variant.pragmas ?? []) db.pragma(pragma);
    for (const migration of migrations) db.exec(migration);
    for (const index of variant.dropIndexes ?? []) db.exec(`DROP INDEX ${index}`);
    const insertSession = db.prepare(
      'INSERT INTO sessions (id, profile_id, version, doc) VALUES (?, ?, 1, ?) ON CONFLICT (id) DO NOTHING',
    );
    const insertProfile = db.prepare('INSERT INTO profiles (id, doc) VALUES (?, ?)');
    const insertEvent = db.prepare(
      'INSERT INTO events (id, insert_time, type, source_id, session_id, profile_id, doc) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    const ids = variant.ids ?? randomUUID;
    const sessionIds = variant.sessionIds ?? randomUUID;
    const types = ['page-view', 'product-view', 'add-to-cart', 'scroll'];
    const eventDoc = eventsPerRequest === 1 ? `{"type":"page-view","context":${context}}` : smallEvent;
    interface WriteSet {
      session: string;
      profile: string;
      time: string;
    }
    const apply = (ws: WriteSet) => {
      insertSession.run(ws.session, ws.profile, `{"id":"${ws.session}","context":${context}}`);
      insertProfile.run(ws.profile, `{"id":"${ws.profile}","stats":{"visits":1}}`);
      for (let i = 0; i < eventsPerRequest; i++)
        insertEvent.run(ids(), ws.time, types[i % types.length], 'src', ws.session, ws.profile, eventDoc);
    };
    const applyOne = db.transaction(apply);
    const savepoint = variant.savepoint ?? true;
    const writeBatch = db.transaction((items: WriteSet[]) => {
      for (const ws of items) {
        if (savepoint) applyOne(ws);
        else apply(ws);
      }
    });
    let elapsed = 0;
    for (let done = 0; done < requests; done += batch) {
      const time = new Date().toISOString();
      const items = Array.from({ length: batch }, () => ({ session: sessionIds(), profile: ids(), time }));
      const started = process.cpuUsage();
      writeBatch(items);
      const used = process.cpuUsage(started);
      elapsed += used.user + used.system;
    }
    return elapsed / requests;
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

function main() {
  const { values } = parseArgs({ options: { reps: { type: 'string', default: '3' } } });
  const reps = Math.max(1, Number(values.reps));
  const shapes = [
    { name: '1 event per request (64 requests per transaction)', events: 1, requests: 10_000, batch: 64 },
    { name: '100 events per request (16 requests per transaction)', events: 100, requests: 800, batch: 16 },
  ];
  console.log(
    `store write cost, median of ${reps} runs (CPU µs, user + system, of the write transactions per request / per event)`,
  );
  for (const shape of shapes) {
    console.log(`\n${shape.name}`);
    for (const variant of variants) {
      const runs = Array.from({ length: reps }, () =>
        measure(variant, shape.events, shape.requests, shape.batch),
      );
      const perRequest = median(runs);
      console.log(
        `  ${perRequest.toFixed(0).padStart(6)} µs/request ${(perRequest / shape.events).toFixed(1).padStart(7)} µs/event  ${variant.name}`,
      );
    }
  }
}

main();
