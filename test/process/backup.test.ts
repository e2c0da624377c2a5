/**
 * `npm run backup -- <file>` (the `backup` command of the service's entry point) copies the embedded
 * store while the service writes to it; the copy, restored, holds every event acknowledged before
 * the backup began.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { tempDir } from '../helpers.js';
import { freePort, spawnServer, waitForHealth } from '../support/process.js';

const TOKEN = 'backup-token';
const auth = { authorization: `Bearer ${TOKEN}` };

async function serve(dataDir: string) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = spawnServer({ PORT: String(port), TRACK_DATA_DIR: dataDir, TRACK_API_TOKEN: TOKEN });
  await waitForHealth(base, server.child, server.output);
  return { ...server, base };
}

async function storedSessions(base: string): Promise<Set<string>> {
  const sessions = new Set<string>();
  let cursor: string | null = null;
  do {
    const query = new URLSearchParams({ limit: '1000', ...(cursor ? { cursor } : {}) });
    const page = (await (await fetch(`${base}/events?${query}`, { headers: auth })).json()) as {
      result: { session: { id: string } }[];
      next: string | null;
    };
    for (const e of page.result) sessions.add(e.session.id);
    cursor = page.next;
  } while (cursor);
  return sessions;
}

test('a backup taken while the service writes restores every event acknowledged before it began', async (t) => {
  const dataDir = tempDir();
  const service = await serve(dataDir);
  t.after(() => service.child.kill('SIGKILL'));
  const created = await fetch(`${service.base}/event-source`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ id: 'web' }),
  });
  assert.equal(created.status, 200);

  // Eight clients send one event per request, each on a session of its own, until told to stop.
  const acknowledged: string[] = [];
  let stop = false;
  let n = 0;
  const client = async () => {
    while (!stop) {
      const sid = `s-${n++}`;
      const res = await fetch(`${service.base}/track`, {
        method: 'POST',
        body: JSON.stringify({
          source: { id: 'web' },
          session: { id: sid },
          context: { page: { url: `https://shop.example/${sid}` } },
          events: [{ type: 'page-view', properties: { n } }],
        }),
      });
      if (res.status === 200) acknowledged.push(sid);
      await res.arrayBuffer();
    }
  };
  const clients = Array.from({ length: 8 }, client);
  while (acknowledged.length < 500) await new Promise((resolve) => setTimeout(resolve, 20));

  const before = acknowledged.length;
  const file = join(tempDir('collector-backup-'), 'collector-backup.db');
  const backup = spawnServer({ TRACK_DATA_DIR: dataDir }, ['backup', file]);
  const [code] = (await once(backup.child, 'exit')) as [number | null];
  assert.equal(code, 0, backup.output());
  assert.match(
    backup.output(),
    /backup of .*collector\.db written to .*collector-backup\.db \(\d+ pages, checked\)/,
  );
  const during = acknowledged.length;
  assert.ok(during > before, 'the service kept writing during the backup');
  stop = true;
  await Promise.all(clients);
  assert.equal(existsSync(`${file}.partial`), false);

  // A backup never overwrites a file.
  const again = spawnServer({ TRACK_DATA_DIR: dataDir }, ['backup', file]);
  const [againCode] = (await once(again.child, 'exit')) as [number | null];
  assert.equal(againCode, 1);
  assert.match(again.output(), /^cannot back up: .* already exists: choose a new file\n$/);

  // Restore: the copy becomes the store of a new data folder.
  const restored = tempDir();
  mkdirSync(restored, { recursive: true });
  copyFileSync(file, join(restored, 'collector.db'));
  const second = await serve(restored);
  t.after(() => second.child.kill('SIGKILL'));
  const sessions = await storedSessions(second.base);
  const missing = acknowledged.slice(0, before).filter((sid) => !sessions.has(sid));
  assert.deepEqual(missing, [], `${missing.length} of ${before} acknowledged events missing from the copy`);
  const source = await fetch(`${second.base}/event-source/web`, { headers: auth });
  assert.equal(source.status, 200);
});

test('backup refuses with PostgreSQL (pg_dump is the tool) and when there is no store to copy', async () => {
  const pg = spawnServer({ DATABASE_URL: 'postgres://u@127.0.0.1:1/db' }, [
    'backup',
    join(tempDir(), 'x.db'),
  ]);
  const [pgCode] = (await once(pg.child, 'exit')) as [number | null];
  assert.equal(pgCode, 1);
  assert.match(
    pg.output(),
    /^cannot back up: with DATABASE_URL the data is in PostgreSQL: back it up with pg_dump/,
  );
  const empty = spawnServer({ TRACK_DATA_DIR: tempDir() }, ['backup', join(tempDir(), 'x.db')]);
  const [emptyCode] = (await once(empty.child, 'exit')) as [number | null];
  assert.equal(emptyCode, 1);
  assert.match(empty.output(), /^cannot back up: there is no embedded store to back up/);
  const usage = spawnServer({ TRACK_DATA_DIR: tempDir() }, ['backup']);
  const [usageCode] = (await once(usage.child, 'exit')) as [number | null];
  assert.equal(usageCode, 2);
  assert.match(usage.output(), /backup needs one argument/);
});
