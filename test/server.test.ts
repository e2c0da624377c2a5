import assert from 'node:assert/strict';
import { once } from 'node:events';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadConfig } from '../src/config.js';
import { tempDir } from './helpers.js';
import { freePort, spawnServer, waitForHealth } from './support/process.js';

/** The server with its INFO lines (token location, access log) kept for the assertions. */
const startServer = (env: Record<string, string>) => spawnServer({ LOG_LEVEL: 'info', ...env });

test('SIGTERM: requests in flight finish and are stored, then the process exits 0', async (t) => {
  const dataDir = tempDir();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const { child, output } = startServer({
    PORT: String(port),
    TRACK_DATA_DIR: dataDir,
    TRACK_ACCESS_LOG: 'yes',
  });
  t.after(() => child.kill('SIGKILL'));
  await waitForHealth(base, child, output);

  // No TRACK_API_TOKEN: a token was generated into the data folder, private to its owner.
  const tokenFile = join(dataDir, 'api-token');
  assert.equal(statSync(tokenFile).mode & 0o777, 0o600);
  assert.match(output(), /management API token is in .*api-token/);
  const token = (await import('node:fs')).readFileSync(tokenFile, 'utf8').trim();
  const auth = { authorization: `Bearer ${token}` };
  await fetch(`${base}/event-source`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ id: 'src-1' }),
  });

  const send = (i: number) =>
    fetch(`${base}/track`, {
      method: 'POST',
      body: JSON.stringify({
        source: { id: 'src-1' },
        session: { id: `s-${i}` },
        events: [{ type: 'page-view' }],
      }),
    }).then(
      async (res) => {
        // A request arriving during the shutdown is refused with the catalogue's 503.
        if (res.status === 503) {
          assert.equal(res.headers.get('retry-after'), '1');
          assert.match(((await res.json()) as { detail: string }).detail, /shutting down/);
        }
        return String(res.status);
      },
      (error: { cause?: { code?: string } }) => error.cause?.code ?? 'error',
    );
  const inFlight = Array.from({ length: 40 }, (_, i) => send(i));
  // Stop as soon as the first answer arrives: the others are then in flight or still to come.
  await Promise.race(inFlight);
  child.kill('SIGTERM');
  const statuses = await Promise.all(inFlight);
  const [code] = await once(child, 'exit');
  assert.equal(code, 0, output());
  assert.match(output(), /shutting down/);
  const acknowledged = statuses.filter((s) => s === '200').length;
  assert.ok(acknowledged > 0, `statuses: ${statuses.join(',')}`);
  // Every answer the clients got is in the access log (one line per request); the other requests
  // were refused at the connection (never read, so nothing of them was acknowledged or stored).
  const lines = output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map(
      (line) => JSON.parse(line) as { msg?: string; req?: { url?: string }; res?: { statusCode?: number } },
    );
  const completed = lines.filter((l) => l.msg === 'request completed' && l.req?.url === '/track');
  assert.equal(lines.filter((l) => l.msg === 'incoming request').length, 0, 'one line per request');
  assert.equal(acknowledged, completed.filter((l) => l.res?.statusCode === 200).length);
  assert.equal(
    statuses.filter((s) => s === '503').length,
    completed.filter((l) => l.res?.statusCode === 503).length,
  );
  assert.ok(
    statuses.every((s) => ['200', '503', 'ECONNREFUSED', 'ECONNRESET'].includes(s)),
    `statuses: ${statuses.join(',')}`,
  );

  // Start again on the same data: every acknowledged event is there.
  const again = startServer({ PORT: String(port), TRACK_DATA_DIR: dataDir });
  t.after(() => again.child.kill('SIGKILL'));
  await waitForHealth(base, again.child, again.output);
  const page = (await (await fetch(`${base}/events?limit=1000`, { headers: auth })).json()) as {
    result: unknown[];
  };
  assert.ok(page.result.length >= acknowledged, `${page.result.length} stored, ${acknowledged} acknowledged`);
  again.child.kill('SIGTERM');
  await once(again.child, 'exit');
});

test('a bad setting stops the start with a clear message and exit code 1', async () => {
  const { child, output } = startServer({ PORT: 'eighty', TRACK_DATA_DIR: tempDir() });
  const [code] = await once(child, 'exit');
  assert.equal(code, 1);
  assert.match(output(), /configuration error: PORT must be an integer/);
});

test('TRACK_WORKERS above 1 is refused with the embedded store (one writer)', async () => {
  const { child, output } = startServer({ TRACK_WORKERS: '2', TRACK_DATA_DIR: tempDir() });
  const [code] = await once(child, 'exit');
  assert.equal(code, 1);
  assert.match(output(), /configuration error: TRACK_WORKERS=2 needs the PostgreSQL store \(DATABASE_URL\)/);
});

test('settings are read from the environment with the documented defaults', () => {
  const defaults = loadConfig({});
  assert.equal(defaults.port, 8686);
  assert.equal(defaults.host, '127.0.0.1');
  assert.equal(defaults.dataDir, './data');
  assert.equal(defaults.validatorTtlSec, 180);
  assert.equal(defaults.bodyLimit, 1_048_576);
  assert.equal(defaults.maxEvents, 1000);
  assert.equal(defaults.maxDepth, 32);
  assert.equal(defaults.debug, true);
  assert.equal(defaults.apiToken, undefined);
  for (const word of ['no', 'false', '0', 'off', 'NO'])
    assert.equal(loadConfig({ TRACK_DEBUG: word }).debug, false);
  const set = loadConfig({ EVENT_VALIDATOR_TTL: '0', TRACK_API_TOKEN: 'x', DATABASE_URL: 'postgres://h/db' });
  assert.equal(set.validatorTtlSec, 0);
  assert.equal(set.apiToken, 'x');
  assert.equal(set.databaseUrl, 'postgres://h/db');
  assert.throws(() => loadConfig({ TRACK_DEBUG: 'maybe' }), /TRACK_DEBUG/);
  assert.throws(() => loadConfig({ EVENT_VALIDATOR_TTL: '-1' }), /EVENT_VALIDATOR_TTL/);
  assert.throws(() => loadConfig({ DATABASE_URL: 'mysql://x' }), /DATABASE_URL/);
  assert.throws(() => loadConfig({ TRACK_SYNC: 'always' }), /TRACK_SYNC/);
});
