/**
 * Held profiles of the embedded store (src/storage/sqlite/held-profiles.ts): a change is read at
 * once, kept in the log until its row is written, written once due, when the store closes, and when
 * a store opens on what a crash left; a transaction that fails takes its holds back with it.
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test, type TestContext } from 'node:test';
import Database from 'better-sqlite3';
import { diffOf } from '../../src/model/profile-diff.js';
import { applyOpsInPlace, type ProfileOp } from '../../src/model/profile-ops.js';
import { newProfile } from '../../src/model/profiles.js';
import type { CommitResult, ProfileRecord } from '../../src/model/records.js';
import { lockDataDir, migrate } from '../../src/storage/sqlite/connection.js';
import { HOLD_MS, MAX_HOLD_MS } from '../../src/storage/sqlite/held-profiles.js';
import { readLogRow } from '../../src/storage/sqlite/profile-log.js';
import { profileWrites } from '../../src/storage/sqlite/profiles.js';
import { writeStatements } from '../../src/storage/sqlite/statements.js';
import { SqliteStore } from '../../src/storage/sqlite/store.js';
import { tempDir } from '../helpers.js';
import { at, event, session } from './contract.js';

const cleanups: (() => void)[] = [];
after(() => {
  for (const cleanup of cleanups.reverse()) cleanup();
});

/** A folder of its own, locked as the service locks it (holding needs it). */
function folder(): string {
  const dataDir = tempDir('collector-held-');
  const release = lockDataDir(dataDir);
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }), release);
  return dataDir;
}

async function opened(t: TestContext, dataDir: string): Promise<SqliteStore> {
  const store = new SqliteStore({ dataDir, sync: 'normal', writeQueueLimit: 10_000 });
  await store.open();
  t.after(() => store.close());
  return store;
}

/** What the file itself holds, read by another connection: the profile's row and the log. */
function onDisk(dataDir: string, id: string): { traits: unknown; logged: number } {
  const db = new Database(join(dataDir, 'collector.db'), { readonly: true });
  try {
    const doc = db.prepare('SELECT doc FROM profiles WHERE id = ?').pluck().get(id) as string;
    const logged = db.prepare('SELECT count(*) FROM profile_log').pluck().get() as number;
    return { traits: (JSON.parse(doc) as ProfileRecord).traits, logged };
  } finally {
    db.close();
  }
}

function committed(result: CommitResult): void {
  assert.equal(result.ok, true, JSON.stringify(result));
}

const increment: ProfileOp = { op: 'increment', path: ['traits', 'public', 'n'], value: 1 };

/** Profile `id` with its session `s-<id>`. */
async function create(store: SqliteStore, id: string): Promise<void> {
  committed(
    await store.commit({
      session: { record: session(`s-${id}`, id), expectVersion: null },
      profile: { op: 'create', record: newProfile(id, at(0)) },
      events: [event(`e-${id}`, { session: { id: `s-${id}` }, profile: { id } })],
    }),
  );
}

/** A store on a folder of its own, open, with these profiles stored. */
async function withProfiles(t: TestContext, ...ids: string[]) {
  const dataDir = folder();
  const store = await opened(t, dataDir);
  for (const id of ids) await create(store, id);
  return { dataDir, store };
}

/**
 * One request of a known session: an event and its operations on the profile. `eventId`: an id
 * already stored makes the write set fail at its event run, after its profile change was held.
 */
function changeOf(id: string, n: number, ops: ProfileOp[] = [increment], eventId = `e-${id}-${n}`) {
  return {
    profile: { op: 'keep' as const, id, change: { at: at(n), steps: [{ event: eventId, ops }] } },
    events: [event(eventId, { session: { id: `s-${id}` }, profile: { id } })],
  };
}

const counted = async (store: SqliteStore, id: string) =>
  ((await store.getProfile(id))?.traits.public as { n?: number } | undefined)?.n;

describe('sqlite: held profiles', () => {
  test('a change is read at once; its row is written when the store closes', async (t) => {
    const { dataDir, store } = await withProfiles(t, 'p1');
    for (let n = 1; n <= 3; n++) committed(await store.commit(changeOf('p1', n)));
    committed(
      await store.commit(changeOf('p1', 4, [{ op: 'identify', type: 'email', value: 'a@example.com' }])),
    );
    assert.equal(await counted(store, 'p1'), 3);
    assert.equal((await store.findProfileByIdentity({ type: 'email', value: 'a@example.com' }))?.id, 'p1');
    // Attaching the identity is held like any change: the row is as created, the log has four rows.
    assert.deepEqual(onDisk(dataDir, 'p1'), { traits: { public: {}, private: {} }, logged: 4 });

    for (let n = 5; n <= 7; n++) committed(await store.commit(changeOf('p1', n)));
    assert.equal(await counted(store, 'p1'), 6);
    assert.deepEqual(onDisk(dataDir, 'p1'), { traits: { public: {}, private: {} }, logged: 7 });
    await store.close();
    assert.deepEqual(onDisk(dataDir, 'p1'), { traits: { public: { n: 6 }, private: {} }, logged: 0 });
    const reopened = await opened(t, dataDir);
    assert.deepEqual((await reopened.getProfile('p1'))?.ids, [{ type: 'email', value: 'a@example.com' }]);
  });

  test('a hold is written once due, without another commit', async (t) => {
    const { dataDir, store } = await withProfiles(t, 'p1');
    committed(await store.commit(changeOf('p1', 1)));
    assert.equal(onDisk(dataDir, 'p1').logged, 1);
    await new Promise((resolve) => setTimeout(resolve, HOLD_MS * 2.5));
    assert.deepEqual(onDisk(dataDir, 'p1'), { traits: { public: { n: 1 }, private: {} }, logged: 0 });
  });

  /**
   * Changes of p1 a quarter of HOLD_MS apart for a little over MAX_HOLD_MS, each before the one
   * before it is due, and `between` after each; the row's count, read from the file at the end.
   */
  async function changedOften(store: SqliteStore, dataDir: string, between: (n: number) => Promise<void>) {
    const changes = Math.ceil(MAX_HOLD_MS / (HOLD_MS / 4)) + 4;
    for (let n = 1; n <= changes; n++) {
      if (n > 1) await new Promise((resolve) => setTimeout(resolve, HOLD_MS / 4));
      committed(await store.commit(changeOf('p1', n)));
      await between(n);
    }
    assert.equal(await counted(store, 'p1'), changes);
    const { traits } = onDisk(dataDir, 'p1');
    return { changes, written: (traits as { public: { n?: number } }).public.n ?? 0 };
  }

  test('a profile changed more often than HOLD_MS has its row written once held MAX_HOLD_MS', async (t) => {
    const { dataDir, store } = await withProfiles(t, 'p1');
    const { changes, written } = await changedOften(store, dataDir, async () => {});
    // A commit after the first change was MAX_HOLD_MS old wrote the row with what it held then.
    assert.ok(written >= 4 && written < changes, `row written with n = ${written}`);
  });

  test('transactions that fail do not put a held row off', async (t) => {
    const { dataDir, store } = await withProfiles(t, 'p1');
    // A write set that fails (its event is stored) after every second change: each failure makes
    // the writer hold again what the log holds.
    const { changes, written } = await changedOften(store, dataDir, async (n) => {
      if (n % 2 === 0) {
        await assert.rejects(store.commit(changeOf('p1', 1000 + n, [increment], 'e-p1')), /UNIQUE/);
      }
    });
    assert.ok(written >= 4 && written < changes, `row written with n = ${written}`);
  });

  test('after a failed transaction every hold keeps its place and time', async (t) => {
    const { dataDir, store } = await withProfiles(t, 'a', 'b', 'c');
    const n = new Map<string, number>();
    const change = async (id: string) => {
      n.set(id, (n.get(id) ?? 0) + 1);
      committed(await store.commit(changeOf(id, n.get(id)!)));
    };
    // a and c change every quarter of HOLD_MS from the start; b at the start, then rests (its row
    // is written, while a still needs the log's first row), then changes again from 2.5 × HOLD_MS;
    // a write set fails at 3 × HOLD_MS.
    const ticks = Math.ceil(MAX_HOLD_MS / (HOLD_MS / 4)) + 3;
    for (let tick = 0; tick < ticks; tick++) {
      if (tick > 0) await new Promise((resolve) => setTimeout(resolve, HOLD_MS / 4));
      await change('a');
      if (tick === 0 || tick >= 10) await change('b');
      await change('c');
      if (tick === 12) await assert.rejects(store.commit(changeOf('a', 1000, [increment], 'e-a')), /UNIQUE/);
    }
    // c's first change is more than MAX_HOLD_MS old: its row is written, b's new changes
    // notwithstanding.
    const written = (onDisk(dataDir, 'c').traits as { public: { n?: number } }).public.n ?? 0;
    assert.ok(written >= 4 && written < n.get('c')!, `c's row written with n = ${written}`);
    for (const id of ['a', 'b', 'c']) assert.equal(await counted(store, id), n.get(id));
  });

  test("a batch's changes are logged in one row, and a crash then loses none", async (t) => {
    const ids = ['p1', 'p2', 'p3', 'p4'];
    const { dataDir, store } = await withProfiles(t, ...ids);
    // Submitted together: one batch, one transaction. p1 changes twice in it.
    const results = await Promise.all([
      ...ids.map((id) => store.commit(changeOf(id, 1))),
      store.commit(changeOf('p1', 2)),
    ]);
    results.forEach(committed);
    assert.equal(onDisk(dataDir, 'p1').logged, 1);
    const crashed = folder();
    for (const suffix of ['', '-wal']) {
      const file = join(dataDir, `collector.db${suffix}`);
      if (existsSync(file)) copyFileSync(file, join(crashed, `collector.db${suffix}`));
    }
    const reopened = await opened(t, crashed);
    for (const id of ids) assert.equal(await counted(reopened, id), id === 'p1' ? 2 : 1, id);
    assert.deepEqual(onDisk(crashed, 'p1'), { traits: { public: { n: 2 }, private: {} }, logged: 0 });
  });

  test('what a crash leaves held is written when the store opens again', async (t) => {
    const { dataDir, store } = await withProfiles(t, 'p1', 'p2');
    for (let n = 1; n <= 5; n++) {
      committed(await store.commit(changeOf('p1', n)));
      if (n % 2 === 0) committed(await store.commit(changeOf('p2', n)));
    }
    // The files as a crash of the process now would leave them: the database and its log.
    const crashed = folder();
    for (const suffix of ['', '-wal']) {
      const file = join(dataDir, `collector.db${suffix}`);
      if (existsSync(file)) copyFileSync(file, join(crashed, `collector.db${suffix}`));
    }
    assert.equal(onDisk(crashed, 'p1').logged, 7);
    const reopened = await opened(t, crashed);
    assert.equal(await counted(reopened, 'p1'), 5);
    assert.equal(await counted(reopened, 'p2'), 2);
    assert.deepEqual(onDisk(crashed, 'p1'), { traits: { public: { n: 5 }, private: {} }, logged: 0 });
    assert.deepEqual(onDisk(crashed, 'p2').traits, { public: { n: 2 }, private: {} });
  });

  test('identities and a merge held when a crash comes are whole when the store opens again', async (t) => {
    const { dataDir, store } = await withProfiles(t, 'p1', 'p2');
    const email: ProfileOp = { op: 'identify', type: 'email', value: 'a@example.com' };
    committed(await store.commit(changeOf('p1', 1)));
    committed(await store.commit(changeOf('p1', 2, [increment, email])));
    committed(await store.commit(changeOf('p2', 3, [increment, increment])));
    // p2 takes p1's email: p2 is merged into p1, which held it first.
    const merged = await store.commit(changeOf('p2', 4, [email]));
    assert.deepEqual(merged.ok && merged.merges, [{ merged: 'p2', into: 'p1' }]);
    const before = await store.getProfile('p1');
    assert.deepEqual(before?.ids, [{ type: 'email', value: 'a@example.com' }]);

    const crashed = folder();
    for (const suffix of ['', '-wal']) {
      const file = join(dataDir, `collector.db${suffix}`);
      if (existsSync(file)) copyFileSync(file, join(crashed, `collector.db${suffix}`));
    }
    const reopened = await opened(t, crashed);
    assert.deepEqual(await reopened.getProfile('p1'), before);
    // The merged id answers the survivor, which has the merged profile's data.
    assert.equal((await reopened.getProfile('p2'))?.id, 'p1');
    assert.equal((await reopened.findProfileByIdentity({ type: 'email', value: 'a@example.com' }))?.id, 'p1');
    assert.equal(onDisk(crashed, 'p1').logged, 0);
  });

  test('a profile merged into another stays gone, also after a rolled-back transaction', async (t) => {
    const { store } = await withProfiles(t, 'p1', 'p2');
    const email: ProfileOp = { op: 'identify', type: 'email', value: 'a@example.com' };
    committed(await store.commit(changeOf('p1', 1, [email])));
    committed(await store.commit(changeOf('p2', 2)));
    const merged = await store.commit(changeOf('p2', 3, [email]));
    assert.deepEqual(merged.ok && merged.merges, [{ merged: 'p2', into: 'p1' }]);
    // A change to p2 is a conflict (the request re-resolves to the survivor), not a change to a ghost.
    assert.deepEqual(await store.commit(changeOf('p2', 4)), { ok: false, conflict: 'profile' });
    // A write set that fails rolls its transaction back: the writer holds again what the log holds,
    // which still has p2's documents.
    await assert.rejects(store.commit(changeOf('p1', 5, [increment], 'e-p1')), /UNIQUE/);
    assert.deepEqual(await store.commit(changeOf('p2', 6)), { ok: false, conflict: 'profile' });
    assert.equal(await counted(store, 'p1'), 1);
  });

  test('a write set that fails takes its change back; the others of its batch keep theirs', async (t) => {
    const { dataDir, store } = await withProfiles(t, 'p1', 'p2');
    committed(await store.commit(changeOf('p1', 1)));
    // The write sets queued behind the first are one batch; the bad one fails again when retried
    // alone, and the next one of the batch must not see its hold.
    const [first, bad, last] = await Promise.allSettled([
      store.commit(changeOf('p2', 2)),
      store.commit(changeOf('p1', 3, [increment], 'e-p1')),
      store.commit(changeOf('p1', 4)),
    ]);
    assert.equal(first.status === 'fulfilled' && first.value.ok, true);
    assert.match(bad.status === 'rejected' ? String(bad.reason) : 'committed', /UNIQUE/);
    assert.equal(last.status === 'fulfilled' && last.value.ok, true);
    assert.equal(await counted(store, 'p1'), 2);
    assert.equal(await counted(store, 'p2'), 1);
    await store.close();
    assert.deepEqual(onDisk(dataDir, 'p1'), { traits: { public: { n: 2 }, private: {} }, logged: 0 });
  });

  test('a write set that fails leaves nothing of its change in the record the next one starts from', async (t) => {
    // The writer changes the records it reads in place: p1's from its row (parsed), p2's held.
    const { dataDir, store } = await withProfiles(t, 'p1', 'p2');
    committed(await store.commit(changeOf('p2', 1)));
    for (const id of ['p1', 'p2']) {
      await assert.rejects(store.commit(changeOf(id, 10, [increment, increment], `e-${id}`)), /UNIQUE/);
    }
    committed(await store.commit(changeOf('p1', 2)));
    committed(await store.commit(changeOf('p2', 3)));
    assert.equal(await counted(store, 'p1'), 1);
    assert.equal(await counted(store, 'p2'), 2);
    await store.close();
    assert.equal((onDisk(dataDir, 'p1').traits as { public: { n: number } }).public.n, 1);
    assert.equal((onDisk(dataDir, 'p2').traits as { public: { n: number } }).public.n, 2);
  });

  test('a visit with operations that fails leaves nothing in the record the next change starts from', async (t) => {
    const { store } = await withProfiles(t, 'p1');
    // A new session of p1: the visit's record shares its traits with the record read, which the
    // operations then change in place; the write set fails at its event (already stored).
    const visit = {
      session: { record: session('s-p1-2', 'p1'), expectVersion: null },
      profile: {
        op: 'visit' as const,
        id: 'p1',
        at: at(10),
        change: { at: at(10), steps: [{ event: 'e-p1', ops: [increment, increment] }] },
      },
      events: [event('e-p1', { session: { id: 's-p1-2' }, profile: { id: 'p1' } })],
    };
    await assert.rejects(store.commit(visit), /UNIQUE/);
    committed(await store.commit(changeOf('p1', 2)));
    assert.equal(await counted(store, 'p1'), 1);
    assert.equal((await store.getProfile('p1'))?.stats.visits, 1);
  });

  test('a write set whose session conflicts changes no profile', async (t) => {
    const { store } = await withProfiles(t, 'p1', 'p2');
    committed(await store.commit(changeOf('p2', 1)));
    for (const id of ['p1', 'p2']) {
      // Its session is not at version 7: the conflict is found after its profile was read.
      const stale = { session: { record: session(`s-${id}`, id), expectVersion: 7 }, ...changeOf(id, 10) };
      assert.deepEqual(await store.commit(stale), { ok: false, conflict: 'session' });
    }
    committed(await store.commit(changeOf('p1', 2)));
    committed(await store.commit(changeOf('p2', 3)));
    assert.equal(await counted(store, 'p1'), 1);
    assert.equal(await counted(store, 'p2'), 2);
  });

  test('erasing a held profile erases it for good', async (t) => {
    const { dataDir, store } = await withProfiles(t, 'p1');
    committed(await store.commit(changeOf('p1', 1)));
    assert.equal((await store.eraseProfile('p1'))?.profiles, 1);
    assert.equal(await store.getProfile('p1'), null);
    await store.close();
    const reopened = await opened(t, dataDir);
    assert.equal(await reopened.getProfile('p1'), null);
  });

  test('a change of operations alone is logged as its diff, read again exact over a newer row', () => {
    const db = new Database(':memory:');
    try {
      migrate(db);
      const insert = db.prepare('INSERT INTO profiles (id, doc) VALUES (?, ?)');
      for (const id of ['p1', 'p2']) insert.run(id, JSON.stringify(newProfile(id, at(0))));
      const profiles = profileWrites(writeStatements(db), true);
      // p2's hold comes first: no log row of p1 is trimmed while it lasts. Each change is a
      // transaction of its own, which logs its row last.
      const p2 = { ...profiles.read('p2')!, consents: { email: true } };
      profiles.change(p2, JSON.stringify(p2));
      profiles.logged();
      const steps: ProfileOp[][] = [
        [
          increment,
          { op: 'set', path: ['traits', 'public', 'page'], value: '/a' },
          { op: 'add_segment', value: 's' },
        ],
        [increment, { op: 'set', path: ['traits', 'private', 'o', 'deep'], value: { x: 1 } }],
        [increment, { op: 'unset', path: ['traits', 'public', 'page'] }],
      ];
      const states: ProfileRecord[] = [];
      steps.forEach((ops, i) => {
        const record = profiles.read('p1')!;
        const { written } = applyOpsInPlace(record, ops, at(i + 1));
        profiles.changeBy(record, diffOf(record, written, at(i + 1)));
        profiles.logged();
        states.push(structuredClone(record));
      });
      const rows = db.prepare('SELECT profile_id, doc FROM profile_log ORDER BY seq').raw().all() as [
        string,
        string,
      ][];
      const ofP1 = rows.slice(1);
      assert.equal(ofP1.length, 3);
      for (const [i, [rowProfile, doc]] of ofP1.entries()) {
        const entries = readLogRow(rowProfile, doc);
        assert.equal(entries.length, 1);
        const [id, change] = entries[0]!;
        assert.equal(id, 'p1');
        assert.ok('diff' in change && doc.length < JSON.stringify(states[i]).length, doc);
      }
      const last = states[2]!;
      assert.deepEqual(profiles.read('p1'), last);
      assert.equal(profiles.text('p1'), JSON.stringify(last));
      // p1's row written with its second state, as a flush would have, its diffs still logged:
      // read again (after a rolled-back transaction, or by the next process), the log gives the last.
      db.prepare("UPDATE profiles SET doc = ? WHERE id = 'p1'").run(JSON.stringify(states[1]));
      profiles.invalidate();
      assert.deepEqual(profiles.read('p1'), last);
      const reopened = profileWrites(writeStatements(db), true);
      reopened.flush('all');
      const row = db.prepare("SELECT doc FROM profiles WHERE id = 'p1'").pluck().get() as string;
      assert.deepEqual(JSON.parse(row), last);
      assert.deepEqual(
        JSON.parse(db.prepare("SELECT doc FROM profiles WHERE id = 'p2'").pluck().get() as string),
        p2,
      );
      assert.equal(db.prepare('SELECT count(*) FROM profile_log').pluck().get(), 0);
    } finally {
      db.close();
    }
  });

  test('a log that cannot be read again fails every later use of the holds, never a stale one', () => {
    const db = new Database(':memory:');
    try {
      migrate(db);
      const created = newProfile('p1', at(0));
      db.prepare('INSERT INTO profiles (id, doc) VALUES (?, ?)').run('p1', JSON.stringify(created));
      const profiles = profileWrites(writeStatements(db), true);
      const changed = { ...created, traits: { public: { n: 1 }, private: {} } };
      profiles.change(changed, JSON.stringify(changed));
      profiles.logged();
      // The log cannot be read: its table is away.
      db.exec('ALTER TABLE profile_log RENAME TO profile_log_away');
      // As after a rolled-back transaction: every use of the holds must read the log first.
      profiles.invalidate();
      assert.throws(() => profiles.read('p1'), /no such table/);
      assert.throws(() => profiles.text('p1'), /no such table/);
      assert.throws(() => profiles.flush('all'), /no such table/);
      db.exec('ALTER TABLE profile_log_away RENAME TO profile_log');
      assert.deepEqual(profiles.read('p1')?.traits, { public: { n: 1 }, private: {} });
    } finally {
      db.close();
    }
  });
});
