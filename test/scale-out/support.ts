/**
 * Real collector processes (`node --import tsx src/server.ts`) on one PostgreSQL database, as a
 * scaled-out deployment runs them behind a load balancer.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import type { TestContext } from 'node:test';
import pg from 'pg';
import { tempDir, TOKEN, type Json } from '../helpers.js';
import { freePort, spawnServer, waitForHealth } from '../support/process.js';

export { freePort, spawnServer, waitForHealth };

export { TOKEN };

export type { Json } from '../helpers.js';

export interface Answer {
  status: number;
  headers: Headers;
  body: Json;
  text: string;
}

export interface Collector {
  base: string;
  child: ChildProcess;
  /** What the process wrote to stdout and stderr so far. */
  output(): string;
  /** POST with a JSON body, without the token (tracking endpoints). */
  post(path: string, body: unknown): Promise<Answer>;
  /** Management request with the token. */
  manage(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<Answer>;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

async function request(url: string, init: RequestInit): Promise<Answer> {
  const res = await fetch(url, init);
  const text = await res.text();
  let body: Json = {};
  try {
    body = JSON.parse(text) as Json;
  } catch {
    // not JSON: the text is there to read
  }
  return { status: res.status, headers: res.headers, body, text };
}

/**
 * Starts one collector on `databaseUrl` with the shared test token and waits until it is healthy.
 * It is killed when the test ends, if still running.
 */
export async function startCollector(
  t: TestContext,
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<Collector> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const dataDir = tempDir();
  const { child, output } = spawnServer({
    PORT: String(port),
    TRACK_DATA_DIR: dataDir,
    TRACK_API_TOKEN: TOKEN,
    DATABASE_URL: databaseUrl,
    ...env,
  });
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
    rmSync(dataDir, { recursive: true, force: true });
  });
  await waitForHealth(base, child, output);
  const auth = { authorization: `Bearer ${TOKEN}` };
  return {
    base,
    child,
    output,
    post: (path, body) => request(`${base}${path}`, { method: 'POST', body: JSON.stringify(body) }),
    manage: (method, path, body) =>
      request(`${base}${path}`, {
        method,
        headers: body === undefined ? auth : { ...auth, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    async stop() {
      if (child.exitCode !== null) return child.exitCode;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const [code] = (await exited) as [number | null];
      return code;
    },
  };
}

/** The body of a response that must have this status. */
export function ok(answer: Answer, status = 200): Json {
  assert.equal(
    answer.status,
    status,
    `expected ${status}, got ${answer.status}: ${answer.text.slice(0, 500)}`,
  );
  return answer.body;
}

/**
 * Calls `probe` every 50 ms until `done` holds for its answer; fails after `ms` (the bound is
 * generous: the machine may be loaded). Returns the last answer and how long it took.
 */
export async function poll<T>(
  probe: () => Promise<T>,
  done: (value: T) => boolean,
  what: string,
  ms = 5000,
): Promise<{ value: T; elapsedMs: number }> {
  const started = Date.now();
  for (;;) {
    const value = await probe();
    if (done(value)) return { value, elapsedMs: Date.now() - started };
    if (Date.now() - started > ms)
      assert.fail(`${what}: not within ${ms} ms (last: ${JSON.stringify(value)})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** One SQL statement on the database (to count rows the API does not list). */
export async function sql<R extends pg.QueryResultRow>(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** A tracker payload for the source `web`. */
export function track(sessionId: string, extra: Json = {}): Json {
  return {
    source: { id: 'web' },
    session: { id: sessionId },
    events: [{ type: 'page-view', properties: { path: '/' } }],
    ...extra,
  };
}
