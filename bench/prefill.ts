/**
 * `npm run bench -- --prefill <n>`: before the service starts, its fresh embedded store is filled
 * with `n` first visits (a session with the tracker's browser context, its profile, one page-view)
 * of an event source of their own, written through the store's own write path
 * (src/storage/sqlite/writes.ts) in transactions of 1,000, so that the scenarios then run against
 * a large store rather than an empty one: their cost must not grow with the data. The prefill's
 * source is not counted by the stored-count check.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { timeOrderedId } from '../src/domain/ids.js';
import { newProfile } from '../src/model/profiles.js';
import type { EventRecord, JsonObject, WriteSet } from '../src/model/records.js';
import { configureWriter, migrate } from '../src/storage/sqlite/connection.js';
import { toRow } from '../src/storage/sqlite/write-set.js';
import { prepareWrites } from '../src/storage/sqlite/writes.js';
import { browserContext } from './payloads.js';

const BATCH = 1_000;
/** The event source of the prefilled visits. */
export const PREFILL_SOURCE = 'bench-prefill';

function firstVisit(now: string, context: JsonObject): WriteSet {
  const sessionId = randomUUID();
  const profile = newProfile(timeOrderedId(), now);
  const event: EventRecord = {
    id: timeOrderedId(),
    type: 'page-view',
    properties: { path: '/products/42' },
    context: { ...context, page: { url: 'https://shop.example.com/products/42', path: '/products/42' } },
    source: { id: PREFILL_SOURCE },
    session: { id: sessionId },
    profile: { id: profile.id },
    metadata: {
      time: { insert: now, create: now, source: 'server' },
      client_id: null,
      ip: '127.0.0.1',
      status: 'collected',
      profile_less: false,
    },
  };
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
    events: [event],
  };
}

/** Writes `count` first visits into the store of `dataDir` (made and migrated if new). */
export function prefill(dataDir: string, count: number): void {
  if (count <= 0) return;
  const started = Date.now();
  const db = new Database(join(dataDir, 'collector.db'));
  try {
    configureWriter(db, 'normal');
    migrate(db);
    const writes = prepareWrites(db, true);
    const context = browserContext();
    for (let done = 0; done < count; done += BATCH) {
      const now = new Date().toISOString();
      const size = Math.min(BATCH, count - done);
      const outcomes = writes.commit(Array.from({ length: size }, () => toRow(firstVisit(now, context))));
      const failed = outcomes.find((o) => !o.ok);
      if (failed) throw new Error(`prefill: a write set failed: ${JSON.stringify(failed)}`);
      if ((done / BATCH) % 100 === 99) db.pragma('wal_checkpoint(TRUNCATE)');
    }
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  console.log(`prefill: ${count.toLocaleString('en-US')} first visits written in ${seconds} s`);
}
