/**
 * Slow clients cannot hold the service: requests not received in time are answered 408 and closed,
 * connections beyond the cap are refused, and on SIGTERM requests in flight get the grace period,
 * after which the connections still open are closed and the process exits.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { test } from 'node:test';
import { tempDir } from '../helpers.js';
import { freePort, spawnServer, waitForHealth } from '../support/process.js';

const TOKEN = 'slow-clients-token';

/** A connection that announces a body of 100 KB and sends 10 bytes of it. */
function slowClient(port: number): { socket: Socket; received: () => string; closed: Promise<void> } {
  const socket = connect(port, '127.0.0.1');
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (received += chunk));
  socket.on('error', () => undefined); // a reset counts as closed
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write(
    'POST /track HTTP/1.1\r\nHost: collector\r\nContent-Type: application/json\r\nContent-Length: 102400\r\n\r\n{"source":',
  );
  return { socket, received: () => received, closed };
}

async function until(what: string, check: () => boolean, ms = 90_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('3,000 slow clients: beyond the cap refused at once, the others answered 408 and closed; the service then serves', async (t) => {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = spawnServer({
    PORT: String(port),
    TRACK_DATA_DIR: tempDir(),
    TRACK_REQUEST_TIMEOUT: '3',
    TRACK_HEADERS_TIMEOUT: '2',
    TRACK_MAX_CONNECTIONS: '500',
  });
  t.after(() => server.child.kill('SIGKILL'));
  await waitForHealth(base, server.child, server.output);

  const clients = Array.from({ length: 3000 }, () => slowClient(port));
  t.after(() => clients.forEach((c) => c.socket.destroy()));
  // None stays open: each is either refused (over the cap) or answered once its time is up.
  await Promise.all(clients.map((c) => c.closed));
  const timedOut = clients.filter((c) => c.received().startsWith('HTTP/1.1 408'));
  const refused = clients.filter((c) => c.received() === '');
  assert.equal(timedOut.length + refused.length, 3000, 'every connection was answered 408 or refused');
  assert.ok(timedOut.length > 0 && timedOut.length <= 500, `${timedOut.length} answered: at most the cap`);
  const [, body] = timedOut[0]!.received().split('\r\n\r\n');
  assert.deepEqual(JSON.parse(body!), { detail: 'The request was not received in time' });
  assert.match(timedOut[0]!.received(), /content-type: application\/json/i);

  // The service is not worse for it.
  assert.equal((await fetch(`${base}/health`)).status, 200);
});

test('SIGTERM: a request in flight finishes within the grace period, a new request on an open connection gets 503, a slow client is cut off after the grace period', async (t) => {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = spawnServer({
    PORT: String(port),
    TRACK_DATA_DIR: tempDir(),
    TRACK_API_TOKEN: TOKEN,
    TRACK_REQUEST_TIMEOUT: '0', // no limit: only the grace period ends the slow client
    TRACK_SHUTDOWN_GRACE: '2',
    LOG_LEVEL: 'info',
  });
  t.after(() => server.child.kill('SIGKILL'));
  await waitForHealth(base, server.child, server.output);
  const created = await fetch(`${base}/event-source`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify({ id: 'web' }),
  });
  assert.equal(created.status, 200);

  // A request in flight: its headers and half its body arrived before the signal.
  const body = JSON.stringify({
    source: { id: 'web' },
    session: { id: 'in-flight' },
    events: [{ type: 'view' }],
  });
  const inFlight = connect(port, '127.0.0.1');
  let answers = '';
  inFlight.setEncoding('utf8');
  inFlight.on('data', (chunk: string) => (answers += chunk));
  inFlight.write(
    `POST /track HTTP/1.1\r\nHost: c\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 20)}`,
  );
  const slow = slowClient(port);
  await until('both connections to be accepted', () => inFlight.writable && slow.socket.writable);
  await new Promise((resolve) => setTimeout(resolve, 300));

  const exited = once(server.child, 'exit') as Promise<[number | null]>;
  server.child.kill('SIGTERM');
  await until('the shutdown to start', () => /shutting down/.test(server.output()));

  // The rest of the body, and a second request pipelined behind it on the same connection.
  inFlight.write(`${body.slice(20)}GET /health HTTP/1.1\r\nHost: c\r\n\r\n`);
  await until('two answers', () => (answers.match(/HTTP\/1\.1 /g) ?? []).length === 2);
  const [first, second] = answers.split(/(?=HTTP\/1\.1 )/);
  assert.match(first!, /^HTTP\/1\.1 200 /);
  assert.match(second!, /^HTTP\/1\.1 503 /);
  assert.match(second!, /retry-after: 1/i);
  assert.match(second!, /connection: close/i);
  assert.deepEqual(JSON.parse(second!.split('\r\n\r\n')[1]!), {
    detail: 'The service is shutting down, retry later',
  });

  // The slow client holds its connection until the grace period is over; then the process exits 0.
  const [code] = await exited;
  assert.equal(code, 0, server.output());
  await slow.closed;
  assert.match(server.output(), /grace period of 2 s over: closing the connections still open/);
  assert.match(server.output(), /"msg":"stopped"/);
});
