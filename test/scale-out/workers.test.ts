/** TRACK_WORKERS on PostgreSQL: one primary, N collector processes sharing the port. */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readdirSync, readFileSync, readlinkSync, realpathSync, rmSync } from 'node:fs';
import { test } from 'node:test';
import { tempDir } from '../helpers.js';
import { testSchema, usePostgres } from '../support/postgres.js';
import { freePort, ok, poll, spawnServer, TOKEN, track, waitForHealth, type Answer } from './support.js';

usePostgres();

const node = realpathSync(process.execPath);

/** Pids of the node processes whose parent is `parent` (read from /proc: Linux). */
function nodeChildren(parent: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid …: the command name may hold spaces and parentheses.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === parent && readlinkSync(`/proc/${entry}/exe`) === node) children.push(Number(entry));
    } catch {
      // the process ended meanwhile
    }
  }
  return children.sort((x, y) => x - y);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false;
  }
}

test('TRACK_WORKERS=2 with DATABASE_URL: two collector processes serve /track; one that dies is replaced; SIGTERM stops all with exit 0', async (t) => {
  const url = await testSchema();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const dataDir = tempDir();
  const { child, output } = spawnServer({
    PORT: String(port),
    TRACK_DATA_DIR: dataDir,
    TRACK_API_TOKEN: TOKEN,
    DATABASE_URL: url,
    TRACK_WORKERS: '2',
    LOG_LEVEL: 'info',
  });
  t.after(() => {
    const left = nodeChildren(child.pid!);
    if (child.exitCode === null) child.kill('SIGKILL');
    for (const pid of left.filter(alive)) process.kill(pid, 'SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });
  await waitForHealth(base, child, output);
  const primary = child.pid!;

  const { value: workers } = await poll(
    async () => nodeChildren(primary),
    (pids) => pids.length === 2,
    'two worker processes',
    60_000,
  );
  assert.match(output(), /started 2 collector processes/);

  const request = async (path: string, init: RequestInit = {}): Promise<Answer> => {
    const res = await fetch(`${base}${path}`, init);
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: JSON.parse(text) as Answer['body'], text };
  };
  const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
  ok(await request('/event-source', { method: 'POST', headers: auth, body: JSON.stringify({ id: 'web' }) }));
  // Many connections at once, so that both processes take some (the kernel spreads them).
  const answers = await Promise.all(
    Array.from({ length: 30 }, (_, i) =>
      request('/track', { method: 'POST', body: JSON.stringify(track(`w-${i}`)) }),
    ),
  );
  for (const answer of answers) ok(answer);
  const events = ok(await request('/events?limit=100', { headers: auth }));
  assert.equal(events.result.length, 30);

  // A collector that dies is replaced.
  process.kill(workers[0]!, 'SIGKILL');
  const { value: replaced } = await poll(
    async () => nodeChildren(primary),
    (pids) => pids.length === 2 && !pids.includes(workers[0]!),
    'a replacement worker',
    60_000,
  );
  // A kept-alive connection to the killed worker fails the first fetch that reuses it: try again.
  await poll(
    async () => {
      try {
        return (await fetch(`${base}/health`)).status;
      } catch (error) {
        return String(error);
      }
    },
    (status) => status === 200,
    'health after the replacement',
  );
  ok(await request('/track', { method: 'POST', body: JSON.stringify(track('after-replacement')) }));

  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const [code] = (await exited) as [number | null];
  assert.equal(code, 0, output());
  assert.match(output(), /SIGTERM: stopping 2 collector processes/);
  await poll(
    async () => replaced.filter(alive),
    (pids) => pids.length === 0,
    'the workers to be gone',
  );
});
