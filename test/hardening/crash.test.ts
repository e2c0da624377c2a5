/**
 * Durability under a crash (docs/api.md #track-response: "A 200 means every record the request saved is committed
 * to the store and survives a crash of the process right after the response").
 *
 * The service runs as a real process. Concurrent clients send /track requests with options.debugger
 * (whose response lists the stored event ids) and record every acknowledged id; the process is
 * killed with SIGKILL in the middle of the load. A new process on the same data folder must then
 * hold every acknowledged event, session and profile, open cleanly and keep accepting traffic. A
 * profile rule counts each profile's `crash-0` events and another attaches an identity of its
 * session from `crash-1` events: the counts and identities of the acknowledged requests survive
 * too, though the profiles' rows may not have been written yet when the process died
 * (src/storage/sqlite/held-profiles.ts).
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { tempDir } from '../helpers.js';
import { freePort } from '../support/process.js';
import type { Json } from './support.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TOKEN = 'crash-test-token';
const CLIENTS = 32;
const LOAD_MS = 2_000;
const START_TIMEOUT_MS = 30_000;

/** The service as a separate process (`node --import tsx src/server.ts`). */
class ServerProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private output = '';

  constructor(
    readonly port: number,
    dataDir: string,
  ) {
    const env: Record<string, string | undefined> = { ...process.env };
    for (const key of Object.keys(env))
      if (/^(TRACK_|DATABASE_URL$|EVENT_VALIDATOR_TTL$|NODE_TEST_CONTEXT$)/.test(key)) delete env[key];
    this.child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      cwd: ROOT,
      env: {
        ...env,
        PORT: String(port),
        HOST: '127.0.0.1',
        TRACK_DATA_DIR: dataDir,
        TRACK_API_TOKEN: TOKEN,
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (chunk: Buffer) => (this.output = (this.output + chunk.toString()).slice(-20_000));
    this.child.stdout!.on('data', keep);
    this.child.stderr!.on('data', keep);
    this.exited = once(this.child, 'exit').then(([code, signal]) => ({
      code: code as number | null,
      signal: signal as NodeJS.Signals | null,
    }));
  }

  get base(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  logs(): string {
    return this.output;
  }

  async waitForHealth(): Promise<void> {
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (Date.now() < deadline) {
      if (!this.running) throw new Error(`the service exited while starting:\n${this.output}`);
      try {
        const res = await fetch(`${this.base}/health`, { signal: AbortSignal.timeout(1_000) });
        if (res.status === 200) return;
      } catch {
        // not listening yet
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`the service did not answer /health within ${START_TIMEOUT_MS} ms:\n${this.output}`);
  }

  async stop(signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.running) this.child.kill(signal);
    const timeout = new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`the service did not exit on ${signal}`)), 15_000).unref(),
    );
    return Promise.race([this.exited, timeout]);
  }

  async request(method: string, path: string, body?: unknown): Promise<{ status: number; json: Json }> {
    const res = await fetch(`${this.base}${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    return { status: res.status, json: (text ? JSON.parse(text) : {}) as Json };
  }
}

interface LoadResult {
  requests: number;
  acknowledgedEvents: Set<string>;
  sessions: Set<string>;
  profiles: Set<string>;
  /** By profile: the `crash-0` events of its acknowledged requests, which the rule counts. */
  counted: Map<string, number>;
  /** By profile: the email its acknowledged `crash-1` events identified it by (one per session). */
  identified: Map<string, string>;
  statuses: Map<string, number>;
  inFlightAtKill: number;
}

/** `CLIENTS` loops sending /track until the server goes away; records what each 200 acknowledged. */
function runLoad(server: ServerProcess, isKilled: () => boolean) {
  const result: LoadResult = {
    requests: 0,
    acknowledgedEvents: new Set(),
    sessions: new Set(),
    profiles: new Set(),
    counted: new Map(),
    identified: new Map(),
    statuses: new Map(),
    inFlightAtKill: 0,
  };
  const inFlight = new Set<number>();
  const count = (key: string) => result.statuses.set(key, (result.statuses.get(key) ?? 0) + 1);

  async function client(n: number): Promise<void> {
    for (let i = 0; !isKilled(); i++) {
      const session = `crash-${n}-${Math.floor(i / 3)}`;
      const events = Array.from({ length: 1 + ((n + i) % 5) }, (_, k) => ({
        type: `crash-${k % 3}`,
        properties: { client: n, request: i, k, email: `${session}@example.com` },
      }));
      const body = {
        source: { id: 'crash-src' },
        // A new session every third request: both the first-visit and the known-session paths.
        session: { id: session },
        context: { client: n },
        options: { debugger: true },
        events,
      };
      inFlight.add(n);
      result.requests++;
      try {
        const res = await fetch(`${server.base}/track`, {
          method: 'POST',
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(10_000),
        });
        const text = await res.text();
        count(String(res.status));
        if (res.status === 200) {
          const answer = JSON.parse(text) as Json;
          const ids = answer.debugging.events.ids as string[];
          assert.equal(ids.length, events.length, 'every event of a 200 is saved');
          for (const id of ids) result.acknowledgedEvents.add(id);
          result.sessions.add(answer.session.id as string);
          const profileId = answer.profile.id as string;
          result.profiles.add(profileId);
          const counted = events.filter((e) => e.type === 'crash-0').length;
          result.counted.set(profileId, (result.counted.get(profileId) ?? 0) + counted);
          if (events.some((e) => e.type === 'crash-1'))
            result.identified.set(profileId, `${session}@example.com`);
        }
      } catch (error) {
        // Once the process is gone, requests fail: stop this client. Before that, an error is one.
        if (!isKilled()) throw error;
        count('connection error');
        return;
      } finally {
        inFlight.delete(n);
      }
    }
  }

  const done = Promise.all(Array.from({ length: CLIENTS }, (_, n) => client(n)));
  done.catch(() => {}); // awaited after the kill; this only keeps an early failure from being unhandled
  return { result, done, inFlight: () => inFlight.size };
}

/** Every event id stored, through all pages of GET /events?limit=1000. */
async function storedEventIds(server: ServerProcess): Promise<Set<string>> {
  const ids = new Set<string>();
  let cursor: string | null = null;
  for (let pages = 0; pages < 10_000; pages++) {
    const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const page = await server.request('GET', `/events?limit=1000${query}`);
    assert.equal(page.status, 200, JSON.stringify(page.json));
    for (const event of page.json.result as Json[]) {
      assert.ok(!ids.has(event.id as string), `event ${event.id} listed twice`);
      ids.add(event.id as string);
    }
    cursor = page.json.next as string | null;
    if (!cursor) return ids;
  }
  throw new Error('too many pages');
}

/** Runs `check` on every item, a few at a time; returns the items it failed for. */
async function missing(
  items: Iterable<string>,
  check: (item: string) => Promise<boolean>,
): Promise<string[]> {
  const queue = [...items];
  const failed: string[] = [];
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let item = queue.pop(); item !== undefined; item = queue.pop())
        if (!(await check(item))) failed.push(item);
    }),
  );
  return failed;
}

describe('crash durability: SIGKILL under load loses no acknowledged event', () => {
  const dataDir = tempDir('collector-crash-');
  const servers: ServerProcess[] = [];
  after(async () => {
    for (const server of servers) if (server.running) server.child.kill('SIGKILL');
    await Promise.all(servers.map((s) => s.exited));
    rmSync(dataDir, { recursive: true, force: true });
  });

  test(
    'every acknowledged event, session and profile is stored after a restart',
    { timeout: 120_000 },
    async (t) => {
      // 1. Start, create the source, load, kill.
      const first = new ServerProcess(await freePort(), dataDir);
      servers.push(first);
      await first.waitForHealth();
      const created = await first.request('POST', '/event-source', { id: 'crash-src', name: 'Crash test' });
      assert.equal(created.status, 200, JSON.stringify(created.json));
      const rule = await first.request('POST', '/profile-rule', {
        id: 'count',
        name: 'Count crash-0 events',
        event_type: 'crash-0',
        operations: [{ op: 'increment', path: 'traits.public.counted' }],
      });
      assert.equal(rule.status, 200, JSON.stringify(rule.json));
      const identify = await first.request('POST', '/profile-rule', {
        id: 'identify',
        name: 'Identify by the email of crash-1 events',
        event_type: 'crash-1',
        operations: [{ op: 'identify', type: 'email', from: 'properties.email' }],
      });
      assert.equal(identify.status, 200, JSON.stringify(identify.json));

      let killed = false;
      const load = runLoad(first, () => killed);
      await new Promise((resolve) => setTimeout(resolve, LOAD_MS));
      assert.ok(first.running, `the service died under load:\n${first.logs()}`);
      load.result.inFlightAtKill = load.inFlight();
      killed = true;
      first.child.kill('SIGKILL');
      const exit = await first.exited;
      assert.equal(exit.signal, 'SIGKILL');
      await Promise.race([
        load.done,
        new Promise((_, reject) =>
          setTimeout(() => reject(new Error('clients did not stop')), 20_000).unref(),
        ),
      ]);
      const { result } = load;
      assert.ok(
        result.acknowledgedEvents.size > 0,
        `nothing was acknowledged: ${JSON.stringify([...result.statuses])}`,
      );
      for (const status of result.statuses.keys())
        assert.ok(
          status === '200' || status === 'connection error',
          `unexpected answer ${status} under load`,
        );

      // 2. Restart on the same data folder.
      const second = new ServerProcess(await freePort(), dataDir);
      servers.push(second);
      await second.waitForHealth();

      const stored = await storedEventIds(second);
      const lost = [...result.acknowledgedEvents].filter((id) => !stored.has(id));
      const lostSessions = await missing(
        result.sessions,
        async (id) => (await second.request('GET', `/session/${encodeURIComponent(id)}`)).status === 200,
      );
      // A profile's count is at least that of its acknowledged requests; at most one more request
      // of it (two crash-0 events) was in flight, committed but never answered.
      const wrongCounts: string[] = [];
      const lostProfiles = await missing(result.profiles, async (id) => {
        const read = await second.request('GET', `/profile/${encodeURIComponent(id)}`);
        if (read.status !== 200) return false;
        const count = (read.json.traits.public.counted ?? 0) as number;
        const acknowledged = result.counted.get(id)!;
        if (count < acknowledged || count > acknowledged + 2)
          wrongCounts.push(`${id}: ${count}/${acknowledged}`);
        return true;
      });
      // Each identity an acknowledged request attached is the profile's, in its record and its look-up.
      const lostIdentities = await missing(new Set(result.identified.keys()), async (id) => {
        const email = result.identified.get(id)!;
        const read = await second.request('GET', `/profile/${encodeURIComponent(id)}`);
        const ids = (read.json.ids ?? []) as Json[];
        const found = await second.request(
          'GET',
          `/profiles?identity=${encodeURIComponent(`email:${email}`)}`,
        );
        const holder = (found.json.result as Json[] | undefined)?.[0]?.id;
        return ids.some((key) => key.type === 'email' && key.value === email) && holder === id;
      });
      const counts = {
        clients: CLIENTS,
        requests: result.requests,
        inFlightAtKill: result.inFlightAtKill,
        acknowledged: result.acknowledgedEvents.size,
        stored: stored.size,
        lost: lost.length,
        // Committed when the process died but never answered: allowed, the client saw no 200.
        storedUnacknowledged: stored.size - (result.acknowledgedEvents.size - lost.length),
        sessions: result.sessions.size,
        lostSessions: lostSessions.length,
        profiles: result.profiles.size,
        lostProfiles: lostProfiles.length,
        identified: result.identified.size,
        lostIdentities: lostIdentities.length,
        statuses: Object.fromEntries(result.statuses),
      };
      t.diagnostic(`crash counts: ${JSON.stringify(counts)}`);
      console.log(
        `crash durability: acknowledged=${counts.acknowledged} stored=${counts.stored} lost=${counts.lost} ` +
          `(requests=${counts.requests}, in flight at kill=${counts.inFlightAtKill})`,
      );
      assert.deepEqual(lost.slice(0, 10), [], `${lost.length} acknowledged events are missing`);
      assert.deepEqual(
        lostSessions.slice(0, 10),
        [],
        `${lostSessions.length} acknowledged sessions are missing`,
      );
      assert.deepEqual(
        lostProfiles.slice(0, 10),
        [],
        `${lostProfiles.length} acknowledged profiles are missing`,
      );
      assert.deepEqual(wrongCounts.slice(0, 10), [], `${wrongCounts.length} profiles lost counted events`);
      assert.ok(result.identified.size > 0, 'no request attached an identity');
      assert.deepEqual(
        lostIdentities.slice(0, 10),
        [],
        `${lostIdentities.length} acknowledged identities are missing`,
      );
      assert.ok(stored.size >= result.acknowledgedEvents.size);

      // 3. The restarted store works: health, a new /track, and the new event is readable.
      assert.equal((await fetch(`${second.base}/health`)).status, 200);
      const res = await fetch(`${second.base}/track`, {
        method: 'POST',
        body: JSON.stringify({
          source: { id: 'crash-src' },
          session: { id: 'after-restart' },
          options: { debugger: true },
          events: [{ type: 'after-restart' }],
        }),
      });
      assert.equal(res.status, 200);
      const [newId] = ((await res.json()) as Json).debugging.events.ids as string[];
      assert.equal((await second.request('GET', `/event/${newId}`)).status, 200);

      // 4. A graceful stop, then the SQLite file passes its integrity check and holds exactly that.
      const stopped = await second.stop('SIGTERM');
      assert.equal(stopped.code, 0, second.logs());
      const db = new Database(join(dataDir, 'collector.db'), { readonly: true });
      try {
        assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
        assert.equal(db.prepare('SELECT count(*) FROM event_ids').pluck().get(), stored.size + 1);
        // The stop wrote every held profile to its row.
        assert.equal(db.prepare('SELECT count(*) FROM profile_log').pluck().get(), 0);
      } finally {
        db.close();
      }
    },
  );
});
