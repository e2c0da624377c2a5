import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import pg from 'pg';
import { sourceFromInput } from '../../src/domain/sources.js';
import type { CommitResult } from '../../src/model/records.js';
import { newProfile } from '../../src/model/profiles.js';
import { migrate, migrations } from '../../src/storage/postgres/migrations.js';
import { isUnavailable, translate } from '../../src/storage/postgres/errors.js';
import { PostgresStore } from '../../src/storage/postgres/store.js';
import { MigrationsMissingError, StoreUnavailableError } from '../../src/storage/store.js';
import { testSchema, usePostgres, openedStore } from '../support/postgres.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { at, event, rejected, session, storeContract, withContexts } from './contract.js';

/** Every migration's version. */
const ALL = migrations.map((_, i) => i + 1);

usePostgres();

storeContract('postgres', async ({ writeQueueLimit }) => {
  const url = await testSchema();
  const make = () => new PostgresStore({ url, writeQueueLimit });
  return { store: make(), again: make };
});

async function sql<R extends pg.QueryResultRow>(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<R[]> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

function committed(result: CommitResult): void {
  assert.equal(result.ok, true, JSON.stringify(result));
}

async function rejectsUnavailable(promise: Promise<unknown>, what: string): Promise<void> {
  await assert.rejects(promise, StoreUnavailableError, what);
}

describe('postgres: several processes on one database', () => {
  test('visits from two stores are all counted; a new session is inserted once', async (t) => {
    const url = await testSchema();
    const [a, b] = [await openedStore(t, url), await openedStore(t, url)];
    committed(await a.commit({ profile: { op: 'create', record: newProfile('p', at(0)) }, events: [] }));
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        (i % 2 ? a : b).commit({
          session: { record: session(`s${i}`, 'p'), expectVersion: null },
          profile: { op: 'visit', id: 'p', at: at(i + 1) },
          events: [event(`e${i}`, { profile: { id: 'p' } })],
        }),
      ),
    );
    results.forEach(committed);
    assert.equal((await a.getProfile('p'))?.stats.visits, 61);

    // The same new session from both processes at once: one insert wins, the other is a conflict.
    for (let round = 0; round < 10; round++) {
      const ws = (store: PostgresStore) =>
        store.commit({
          session: { record: session(`race-${round}`, null), expectVersion: null },
          events: [],
        });
      const outcomes = await Promise.all([ws(a), ws(b)]);
      assert.equal(outcomes.filter((r) => r.ok).length, 1, JSON.stringify(outcomes));
      assert.deepEqual(
        outcomes.find((r) => !r.ok),
        { ok: false, conflict: 'session' },
      );
    }
  });

  test('the same client ids from two stores at once: each stored once', async (t) => {
    const url = await testSchema();
    const [a, b] = [await openedStore(t, url), await openedStore(t, url)];
    const keys = Array.from({ length: 20 }, (_, i) => `k${String(i).padStart(2, '0')}`);
    const withKey = (id: string, key: string) => {
      const e = event(id);
      e.metadata.client_id = key;
      return e;
    };
    // Each store commits every key, one write set per key, and b also one write set with all of them
    // (in reverse: the store inserts a write set's client ids in one order whatever it is sent in). A
    // few keys also go in opposite orders: the database resolves the deadlock and the loser retries.
    const reversed = ['r0', 'r1', 'r2'];
    const results = await Promise.all([
      ...keys.map((key) => a.commit({ events: [withKey(`a-${key}`, key)] })),
      ...keys.map((key) => b.commit({ events: [withKey(`b-${key}`, key)] })),
      b.commit({ events: [...keys].reverse().map((key) => withKey(`all-${key}`, key)) }),
      ...reversed.map((key) => a.commit({ events: [withKey(`a-${key}`, key)] })),
      ...[...reversed].reverse().map((key) => b.commit({ events: [withKey(`b-${key}`, key)] })),
    ]);
    const duplicates = results.flatMap((r) => (r.ok ? r.duplicates : assert.fail(JSON.stringify(r))));
    assert.equal(duplicates.length, keys.length * 2 + reversed.length);
    for (const key of [...keys, ...reversed]) {
      const stored = await a.listEvents({ clientId: key }, 10, null);
      assert.equal(stored.length, 1, key);
      assert.ok(!duplicates.includes(stored[0]!.id));
    }
  });

  test('replays of one quarantined record from two stores at once: one commits it', async (t) => {
    const url = await testSchema();
    const [a, b] = [await openedStore(t, url), await openedStore(t, url)];
    for (let i = 0; i < 5; i++) await a.putRejected(rejected(`r${i}`, at(i)));
    // Each record replayed four times, twice from each store, with and without a session.
    const results = await Promise.all(
      [a, b].flatMap((store, k) =>
        Array.from({ length: 10 }, (_, i) => {
          const id = `${k}-${i}`;
          const withSession = i % 2 === 0;
          return store.commit({
            session: withSession ? { record: session(`s${id}`, null), expectVersion: null } : undefined,
            events: [event(`e${id}`, { session: withSession ? { id: `s${id}` } : null })],
            replayOf: `r${i % 5}`,
          });
        }),
      ),
    );
    assert.equal(results.filter((r) => r.ok).length, 5, JSON.stringify(results));
    assert.equal(results.filter((r) => !r.ok && r.conflict === 'rejected').length, 15);
    assert.equal((await a.listEvents({}, 50, null)).length, 5);
    assert.deepEqual(await b.listRejected({}, 50, null), []);
  });

  test('batches that visit the same profiles in opposite orders do not fail', async (t) => {
    const url = await testSchema();
    const [a, b] = [await openedStore(t, url), await openedStore(t, url)];
    const ids = ['p1', 'p2', 'p3', 'p4'];
    for (const id of ids) {
      committed(await a.commit({ profile: { op: 'create', record: newProfile(id, at(0)) }, events: [] }));
    }
    const rounds = 15;
    const all: Promise<CommitResult>[] = [];
    for (let round = 0; round < rounds; round++) {
      // Each store gets one batch of four write sets per round; b's batch lists the profiles reversed.
      for (const [store, order] of [
        [a, ids],
        [b, [...ids].reverse()],
      ] as const) {
        for (const id of order) {
          all.push(
            store.commit({
              session: {
                record: session(`${store === a ? 'a' : 'b'}-${round}-${id}`, id),
                expectVersion: null,
              },
              profile: { op: 'visit', id, at: at(round + 1) },
              events: [],
            }),
          );
        }
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    (await Promise.all(all)).forEach(committed);
    for (const id of ids) assert.equal((await a.getProfile(id))?.stats.visits, 1 + 2 * rounds, id);
  });

  test('stores starting together apply each migration once', async (t) => {
    const url = await testSchema();
    const stores = Array.from({ length: 6 }, () => new PostgresStore({ url, writeQueueLimit: 10 }));
    t.after(() => Promise.all(stores.map((s) => s.close())));
    await Promise.all(stores.map((s) => s.open()));
    const rows = await sql<{ version: number }>(
      url,
      'SELECT version FROM schema_migrations ORDER BY version',
    );
    assert.deepEqual(
      rows.map((r) => r.version),
      migrations.map((_, i) => i + 1),
    );
    assert.deepEqual(await migrate({ url, connectTimeoutMs: 5000, statementTimeoutMs: 0 }), {
      applied: [],
      version: migrations.length,
    });
  });

  test('with migrateOnStart false, open refuses a database that lacks migrations', async (t) => {
    const url = await testSchema();
    const store = new PostgresStore({ url, writeQueueLimit: 10, migrateOnStart: false });
    await assert.rejects(
      store.open(),
      (error) => error instanceof MigrationsMissingError && error.pending.join() === ALL.join(),
    );
    const state = await migrate({ url, connectTimeoutMs: 5000, statementTimeoutMs: 0 });
    assert.deepEqual(state.applied, ALL);
    await store.open();
    t.after(() => store.close());
    assert.equal(await store.ping(), true);
  });
});

describe('postgres: npm run migrate', () => {
  const run = (url: string) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'src/server.ts', 'migrate'], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      env: { ...process.env, DATABASE_URL: url },
      encoding: 'utf8',
      timeout: 60_000,
    });

  test('applies the migrations and exits; a second run has nothing to apply', async () => {
    const url = await testSchema();
    const first = run(url);
    assert.equal(first.status, 0, first.stderr);
    assert.match(first.stdout, new RegExp(`applied migrations 1.*version ${migrations.length}`));
    const second = run(url);
    assert.equal(second.status, 0, second.stderr);
    assert.match(second.stdout, /nothing to apply/);
    const store = new PostgresStore({ url, writeQueueLimit: 10, migrateOnStart: false });
    await store.open();
    await store.close();
  });

  test('exits with an error when the database cannot be reached', async () => {
    const { proxy, url } = await TcpProxy.in(await testSchema());
    await proxy.down();
    const result = run(url);
    assert.equal(result.status, 1);
    assert.match(
      result.stderr,
      /^cannot start: the database .* cannot be reached or used \(.*(ECONNREFUSED|connect).*\)\n$/i,
    );
  });
});

describe('postgres: storage forms and indexes', () => {
  test('documents are written as json text, U+0000 included; event types and rules are json text', async (t) => {
    const url = await testSchema();
    const store = await openedStore(t, url);
    committed(
      await store.commit({ events: [event('plain'), event('nul', { properties: { s: 'a\u0000' } })] }),
    );
    const rows = await sql<{ id: string; doc: boolean; raw: boolean }>(
      url,
      'SELECT id, doc IS NOT NULL AS doc, raw IS NOT NULL AS raw FROM events ORDER BY id',
    );
    assert.deepEqual(rows, [
      { id: 'nul', doc: false, raw: true },
      { id: 'plain', doc: false, raw: true },
    ]);
    assert.deepEqual((await store.getEvent('nul'))?.properties, { s: 'a\u0000' });
    const types = await sql<{ table_name: string; column_name: string; data_type: string }>(
      url,
      `SELECT table_name, column_name, data_type FROM information_schema.columns
        WHERE table_schema = current_schema() AND column_name IN ('doc', 'raw') ORDER BY 1, 2`,
    );
    for (const row of types) {
      // Destinations are read whole, never queried inside: JSON text.
      const expected = row.table_name.startsWith('destination')
        ? 'text'
        : ['event_types', 'profile_rules'].includes(row.table_name) || row.column_name === 'raw'
          ? 'json'
          : 'jsonb';
      assert.equal(row.data_type, expected, `${row.table_name}.${row.column_name}`);
    }
  });

  test('jsonb documents of earlier versions are read, replaced when written, moved by merges', async (t) => {
    const url = await testSchema();
    const store = await openedStore(t, url);
    for (const id of ['a', 'b']) {
      committed(
        await store.commit({
          session: { record: session(`s-${id}`, id), expectVersion: null },
          profile: { op: 'create', record: newProfile(id, at(0)) },
          events: [
            event(`e-${id}`, {
              session: { id: `s-${id}` },
              profile: { id },
              properties: { profile: { id } },
            }),
          ],
        }),
      );
    }
    // The form earlier versions wrote: the document in the jsonb column.
    for (const table of ['sessions', 'profiles', 'events'])
      await sql(url, `UPDATE ${table} SET doc = raw::jsonb, raw = NULL`);
    assert.equal((await store.getSession('s-b'))?.record.profile?.id, 'b');
    assert.deepEqual((await store.getEvent('e-b'))?.properties, { profile: { id: 'b' } });
    const identify = (value: string) => ({
      at: at(100),
      steps: [{ event: 'x', ops: [{ op: 'identify' as const, type: 'email', value }] }],
    });
    committed(await store.commit({ profile: { op: 'keep', id: 'a', change: identify('m@x') }, events: [] }));
    committed(await store.commit({ profile: { op: 'keep', id: 'b', change: identify('m@x') }, events: [] }));
    assert.equal((await store.getSession('s-b'))?.record.profile?.id, 'a');
    const moved = await store.getEvent('e-b');
    assert.deepEqual([moved?.profile, moved?.properties], [{ id: 'a' }, { profile: { id: 'b' } }]);
    assert.deepEqual((await store.getProfile('b'))?.ids, [{ type: 'email', value: 'm@x' }]);
    const forms = await sql<{ id: string; doc: boolean }>(
      url,
      `SELECT id, doc IS NOT NULL AS doc FROM profiles UNION ALL SELECT id, doc IS NOT NULL FROM events ORDER BY 1`,
    );
    // The profile written since holds json text; the events moved keep their form.
    assert.deepEqual(forms, [
      { id: 'a', doc: false },
      { id: 'e-a', doc: true },
      { id: 'e-b', doc: true },
    ]);
  });

  test('every read path is served by an index, in page order without a sort', async (t) => {
    const url = await testSchema();
    await openedStore(t, url);
    const client = new pg.Client(url);
    await client.connect();
    t.after(() => client.end());
    // On empty tables every plan is cheap: rule out those that do not use an index or need a sort.
    await client.query('SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_sort = off');
    const plan = async (query: string) =>
      (await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${query}`)).rows
        .map((r) => r['QUERY PLAN'])
        .join('\n');
    const page =
      "(insert_time, id) < ('2026-01-01T00:00:00Z', 'x') ORDER BY insert_time DESC, id DESC LIMIT 50";
    for (const filter of [
      '',
      "profile_id = 'p' AND",
      "session_id = 's' AND",
      "type = 't' AND",
      "source_id = 'x' AND",
    ]) {
      const text = await plan(`SELECT doc, raw FROM events WHERE ${filter} ${page}`);
      assert.match(text, /Index Scan/, `${filter}\n${text}`);
      assert.doesNotMatch(text, /Sort/, `${filter}\n${text}`);
    }
    const rejectedPage = "(time, id) < ('2026-01-01T00:00:00Z', 'x') ORDER BY time DESC, id DESC LIMIT 50";
    for (const filter of ['', "source_id = 'x' AND"]) {
      const text = await plan(`SELECT doc, raw FROM rejected WHERE ${filter} ${rejectedPage}`);
      assert.match(text, /Index Scan/, text);
      assert.doesNotMatch(text, /Sort/, text);
    }
    assert.match(
      await plan("SELECT 1 FROM rejected WHERE event_types @> ARRAY['x']"),
      /rejected_event_types/,
    );
    assert.match(await plan("SELECT 1 FROM sessions WHERE profile_id = 'p'"), /sessions_profile/);
    assert.match(await plan("SELECT 1 FROM events WHERE context_id = 'x'"), /events_context/);
    assert.match(await plan("SELECT doc FROM event_types WHERE event_type = 'x'"), /event_types_pkey/);
    assert.match(await plan("SELECT doc FROM sources WHERE id = 'x'"), /sources_pkey/);
  });
});

describe('postgres: request contexts kept once (docs/api.md#context-storage)', () => {
  test('a context row is written once per write set and deleted with the last event naming it', async (t) => {
    const url = await testSchema();
    const store = await openedStore(t, url);
    const contexts = async () =>
      (await sql<{ n: number }>(url, 'SELECT count(*)::integer AS n FROM event_contexts'))[0]!.n;
    const request = { blob: 'b'.repeat(10_000) };
    const visitor = (id: string, n: number) =>
      Array.from({ length: n }, (_, i) =>
        event(`${id}-${i}`, { session: { id }, profile: { id: `p-${id}` } }, at(i)),
      );
    committed(
      await store.commit({
        ...withContexts(visitor('a', 3), request),
        profile: { op: 'create', record: newProfile('p-a', at(0)) },
      }),
    );
    committed(await store.commit(withContexts(visitor('b', 3), request)));
    committed(await store.commit(withContexts(visitor('small', 3), { app: 1 })));
    assert.equal(await contexts(), 2, 'one per write set whose context is kept once');
    const keyed = withContexts(visitor('c', 2), request);
    keyed.events.forEach((e, i) => (e.metadata.client_id = `k${i}`));
    committed(await store.commit(keyed));
    assert.equal(await contexts(), 3);
    const again = withContexts(visitor('d', 2), request);
    again.events.forEach((e, i) => (e.metadata.client_id = `k${i}`));
    const result = await store.commit(again);
    assert.ok(result.ok && result.duplicates.length === 2);
    assert.equal(await contexts(), 3, 'none for a write set whose events are all duplicates');

    await store.eraseProfile('p-a');
    assert.equal(await contexts(), 2, 'erased with its events');
    // Retention one event at a time: the context stays while an event names it.
    assert.equal(await store.deleteEventsBefore(at(1), 1), 1);
    assert.equal(await store.deleteEventsBefore(at(1), 5), 2);
    assert.equal(await contexts(), 2);
    assert.equal(await store.deleteEventsBefore(at(2), 10), 3);
    assert.equal(await contexts(), 1);
    assert.equal(await store.deleteEventsBefore(at(10), 10), 2);
    assert.equal(await contexts(), 0);
  });
});

describe('postgres: an unreachable database', () => {
  test('errors of the driver and of the server map to StoreUnavailableError', () => {
    const db = (code: string) => Object.assign(new pg.DatabaseError('x', 1, 'error'), { code });
    const system = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:1`), { code });
    for (const error of [
      db('57P01'),
      db('57P03'),
      db('53300'),
      db('08006'),
      db('57014'),
      db('40P01'),
      system('ECONNREFUSED'),
      system('ECONNRESET'),
      system('ETIMEDOUT'),
      new Error('timeout exceeded when trying to connect'),
      new Error('Connection terminated unexpectedly'),
      new Error('Connection terminated due to connection timeout'),
      new Error('Query read timeout'),
    ]) {
      assert.equal(isUnavailable(error), true, String(error));
      assert.ok(translate(error) instanceof StoreUnavailableError);
    }
    for (const error of [db('23505'), db('22P02'), db('42P01'), new TypeError('x is not a function')]) {
      assert.equal(isUnavailable(error), false, String(error));
      assert.equal(translate(error), error);
    }
  });

  test('a stopped server: ping is false, reads and commits fail fast, the pool recovers by itself', async (t) => {
    const { proxy, url } = await TcpProxy.in(await testSchema());
    t.after(() => proxy.close());
    const store = await openedStore(t, url, { connectTimeoutMs: 1000 });
    committed(await store.commit({ events: [event('before')] }));
    assert.notEqual(await store.getEvent('before'), null);

    await proxy.down();
    const started = Date.now();
    assert.equal(await store.ping(), false);
    await rejectsUnavailable(store.getEvent('before'), 'read');
    await rejectsUnavailable(store.listEvents({}, 10, null), 'list');
    await rejectsUnavailable(store.commit({ events: [event('during')] }), 'commit');
    await rejectsUnavailable(store.eraseProfile('p'), 'erase');
    await rejectsUnavailable(store.putSource({ ...sourceRecord, id: 'x' }), 'put');
    assert.ok(Date.now() - started < 3000, `took ${Date.now() - started} ms`);

    await proxy.up();
    assert.equal(await store.ping(), true);
    committed(await store.commit({ events: [event('after')] }));
    assert.notEqual(await store.getEvent('after'), null);
    assert.equal(await store.getEvent('during'), null);
  });

  test('a server that never answers: ping is false within about 2 s, nothing hangs', async (t) => {
    const { proxy, url } = await TcpProxy.in(await testSchema());
    t.after(() => proxy.close());
    const store = await openedStore(t, url, { connectTimeoutMs: 1500 });
    assert.equal(await store.ping(), true);

    await proxy.blackhole();
    let started = Date.now();
    assert.equal(await store.ping(), false);
    assert.ok(Date.now() - started < 2500, `ping took ${Date.now() - started} ms`);
    started = Date.now();
    await rejectsUnavailable(store.commit({ events: [event('lost')] }), 'commit');
    await rejectsUnavailable(store.getEvent('lost'), 'read');
    assert.ok(Date.now() - started < 5000, `took ${Date.now() - started} ms`);

    await proxy.up();
    await proxy.down();
    await proxy.up();
    assert.equal(await store.ping(), true);
    committed(await store.commit({ events: [event('back')] }));
  });

  test('connections ended by the server (admin shutdown) are replaced', async (t) => {
    const url = await testSchema();
    const store = await openedStore(t, url);
    // Several connections in the pool.
    await Promise.all(Array.from({ length: 5 }, (_, i) => store.getEvent(`x${i}`)));
    const ended = await sql<{ ok: boolean }>(
      url,
      `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = 'event-collector' AND pid <> pg_backend_pid()`,
    );
    assert.ok(ended.length >= 1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(await store.ping(), true);
    committed(await store.commit({ events: [event('again')] }));
    assert.notEqual(await store.getEvent('again'), null);
  });

  test('open fails with StoreUnavailableError when the server cannot be reached; close then returns', async (t) => {
    const { proxy, url } = await TcpProxy.in(await testSchema());
    t.after(() => proxy.close());
    await proxy.down();
    const store = new PostgresStore({ url, writeQueueLimit: 10, connectTimeoutMs: 1000 });
    await rejectsUnavailable(store.open(), 'open');
    await store.close();

    await proxy.up();
    const running = await openedStore(t, url, { connectTimeoutMs: 1000 });
    await proxy.down();
    const queued = running.commit({ events: [event('q')] });
    await running.close();
    await rejectsUnavailable(queued, 'a queued commit while the server is down');
  });
});

const sourceRecord = sourceFromInput({ id: 'src', name: 'S' });
