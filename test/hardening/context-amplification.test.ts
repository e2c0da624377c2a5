/**
 * A large request context sent with many events (docs/security.md, docs/api.md#context-storage), on
 * both stores: the context is stored once per request, not once per event, so what a request stores
 * stays within a small multiple of its body, and the events still read back with their merged
 * context. No such body is answered 500.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { Service } from '../helpers.js';
import { usePostgres } from '../support/postgres.js';
import { startOn, STORES, type StoreName } from '../routes/profiles-support.js';
import { allEvents, assertError, answerOf, expectStatus, type Json } from './support.js';

usePostgres();

/** The bytes the store's tables and indexes take now. */
async function storedBytes(service: Service, store: StoreName): Promise<number> {
  if (store === 'sqlite') {
    // Pages in use as a reader sees them (the log's pages included), free pages left out.
    const db = new Database(join(service.dataDir, 'collector.db'), { readonly: true });
    try {
      const pages =
        (db.pragma('page_count', { simple: true }) as number) -
        (db.pragma('freelist_count', { simple: true }) as number);
      return pages * (db.pragma('page_size', { simple: true }) as number);
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: service.config.databaseUrl! });
  await client.connect();
  try {
    const { rows } = await client.query<{ bytes: string }>(
      `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint AS bytes FROM pg_class c
         JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r'`,
    );
    return Number(rows[0]!.bytes);
  } finally {
    await client.end();
  }
}

/**
 * A /track body: a context of `contextBytes` characters (none: no context) and `events` small
 * events, the second with a context of its own. The context is random text, which PostgreSQL cannot
 * compress away.
 */
function body(session: string, contextBytes: number, events: number): string {
  return JSON.stringify({
    source: { id: 'src-1' },
    session: { id: session },
    context:
      contextBytes === 0
        ? undefined
        : {
            page: { url: 'https://example.com/' },
            blob: randomBytes((contextBytes * 3) / 4).toString('base64'),
          },
    events: Array.from({ length: events }, (_, i) => ({
      type: 'e',
      ...(i === 1 ? { context: { page: { title: 'own' } } } : {}),
    })),
  });
}

for (const store of STORES) {
  describe(`a large context sent with many events (${store})`, () => {
    let service: Service;
    /** What storing 1,000 such events costs without a request context (ids, times, indexes…). */
    let bare = 0;
    before(async () => {
      service = await startOn(store);
      const sent = body(`bare-${store}`, 0, 1000);
      const start = await storedBytes(service, store);
      expectStatus(await service.post('/track', sent), 200, 'POST /track');
      bare = (await storedBytes(service, store)) - start;
    });
    after(() => service.close());

    test('200 KB of context with 1,000 events is stored once and read back merged', async () => {
      const sent = body(`amp-${store}`, 200_000, 1000);
      assert.ok(sent.length > 210_000 && sent.length < 220_000, `a body of ${sent.length} bytes`);
      const before = await storedBytes(service, store);
      expectStatus(await service.post('/track', sent), 200, 'POST /track');
      const grown = (await storedBytes(service, store)) - before;
      // One event costs a few hundred bytes of record and index entries whatever its context (ids,
      // times, source, session): `bare`. The context adds about its size once, not once per event.
      console.log(`${store}: body ${sent.length} bytes, store grew by ${grown} (${bare} without context)`);
      assert.ok(
        grown <= bare + 3 * sent.length,
        `the store grew by ${grown} bytes for a body of ${sent.length} (${bare} without context)`,
      );

      const first = expectStatus(await service.get(`/events?session_id=amp-${store}&limit=50`), 200);
      const listed = first.result as Json[];
      assert.ok(listed.length > 0);
      for (const event of listed) {
        assert.equal(event.context.blob.length, 200_000);
        assert.equal(event.context.page.url, 'https://example.com/');
      }
      const events = await allEvents(service, { session_id: `amp-${store}` });
      assert.equal(events.length, 1000);
      const own = events.filter((e) => e.context.page.title === 'own');
      assert.equal(own.length, 1, 'the event with a context of its own keeps it, merged');
      assert.equal(own[0]!.context.page.url, 'https://example.com/');
      assert.equal(own[0]!.context.blob.length, 200_000);
      const one = expectStatus(await service.get(`/event/${own[0]!.id as string}`), 200);
      assert.deepEqual(one.context, own[0]!.context);
    });

    test('900 KB of context with 1,000 events is never a 500', async () => {
      const sent = body(`amp-big-${store}`, 900_000, 1000);
      assert.ok(sent.length > 910_000 && sent.length < service.config.bodyLimit, `${sent.length} bytes`);
      const before = await storedBytes(service, store);
      const res = await service.post('/track', sent);
      if (res.statusCode === 200) {
        const grown = (await storedBytes(service, store)) - before;
        console.log(`${store}: body ${sent.length} bytes, store grew by ${grown} (${bare} without context)`);
        assert.ok(
          grown <= bare + 3 * sent.length,
          `the store grew by ${grown} bytes for a body of ${sent.length} (${bare} without context)`,
        );
        const page = expectStatus(await service.get(`/events?session_id=amp-big-${store}&limit=2`), 200);
        assert.equal((page.result as Json[])[0]!.context.blob.length, 900_000);
      } else {
        assertError(answerOf(res), [413, 422], 'POST /track');
      }
    });
  });
}
