import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { buildApp } from '../../src/app.js';
import { defaultConfig } from '../../src/config.js';
import { AUTH, payload, tempDir, TOKEN } from '../helpers.js';

test('every refused request is logged once with its status, reason and request id', async (t) => {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  const dataDir = tempDir();
  const app = await buildApp({
    config: { ...defaultConfig({ dataDir }), apiToken: TOKEN },
    logger: { level: 'info', stream },
  });
  t.after(async () => {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  await app.inject({ method: 'POST', url: '/event-source', headers: AUTH, payload: { id: 'src-1' } });
  await app.inject({
    method: 'POST',
    url: '/event/management',
    headers: AUTH,
    payload: {
      event_type: 'purchase',
      validation: { json_schema: { 'event@properties': { type: 'object', required: ['price'] } } },
    },
  });

  const refused = [
    {
      id: 'req-unknown-source',
      body: payload({ source: { id: 'nope' } }),
      status: 401,
      detail: /Invalid event source `nope`/,
    },
    { id: 'req-invalid', body: { session: {} }, status: 422, detail: /source|session|events/ },
    {
      id: 'req-schema',
      body: payload({ events: [{ type: 'purchase' }] }),
      status: 406,
      detail: /'price' is a required property/,
    },
  ];
  for (const r of refused) {
    const res = await app.inject({
      method: 'POST',
      url: '/track',
      headers: { 'x-request-id': r.id },
      payload: r.body,
    });
    assert.equal(res.statusCode, r.status);
  }
  const ok = await app.inject({
    method: 'POST',
    url: '/track',
    headers: { 'x-request-id': 'req-ok' },
    payload: payload(),
  });
  assert.equal(ok.statusCode, 200);

  for (const r of refused) {
    const logged = lines.filter((l) => l.reqId === r.id && l.msg === 'request rejected');
    assert.equal(logged.length, 1, `one line for ${r.id}`);
    assert.equal(logged[0]!.status, r.status);
    assert.match(JSON.stringify(logged[0]!.detail), r.detail);
    assert.equal(logged[0]!.url, '/track');
  }
  assert.equal(
    lines.filter((l) => l.reqId === 'req-ok').length,
    0,
    'accepted requests are not logged by default',
  );
});

test('a client X-Request-Id is used only when short and printable', async (t) => {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  const dataDir = tempDir();
  const app = await buildApp({
    config: { ...defaultConfig({ dataDir }), apiToken: TOKEN },
    logger: { level: 'info', stream },
  });
  t.after(async () => {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const send = (id: string) =>
    app.inject({ method: 'POST', url: '/track', headers: { 'x-request-id': id }, payload: payload() });
  const given = ['abc-123', 'x'.repeat(128)];
  const refused = ['x'.repeat(129), 'has space', 'tab\there', 'ünïcode', 'x'.repeat(10_000)];
  for (const id of [...given, ...refused]) assert.equal((await send(id)).statusCode, 401);
  const ids = lines.filter((l) => l.msg === 'request rejected').map((l) => String(l.reqId));
  assert.equal(ids.length, given.length + refused.length);
  assert.deepEqual(ids.slice(0, given.length), given);
  for (const id of ids.slice(given.length)) {
    assert.match(id, /^[0-9a-f-]{36}$/, 'a generated id replaces one that is too long or not printable');
  }
});

test('TRACK_ACCESS_LOG: one line per request, when it completes; log times are ISO 8601 in UTC', async (t) => {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  const dataDir = tempDir();
  const app = await buildApp({
    config: { ...defaultConfig({ dataDir, accessLog: true }), apiToken: TOKEN },
    logger: { level: 'info', stream },
  });
  t.after(async () => {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  await app.inject({ method: 'POST', url: '/event-source', headers: AUTH, payload: { id: 'src-1' } });
  const requests = [
    { id: 'a-ok', url: '/track', body: payload(), status: 200 },
    { id: 'a-refused', url: '/track', body: payload({ source: { id: 'nope' } }), status: 401 },
    { id: 'a-health', url: '/health', body: undefined, status: 200 },
    { id: 'a-missing', url: '/nowhere', body: undefined, status: 404 },
  ];
  for (const r of requests) {
    const res = await app.inject({
      method: r.body === undefined ? 'GET' : 'POST',
      url: r.url,
      headers: { 'x-request-id': r.id },
      payload: r.body,
    });
    assert.equal(res.statusCode, r.status);
  }
  for (const r of requests) {
    const access = lines.filter((l) => l.reqId === r.id && l.msg !== 'request rejected');
    assert.equal(access.length, 1, `one access line for ${r.id}: ${JSON.stringify(access)}`);
    const [line] = access as [Record<string, any>]; // eslint-disable-line @typescript-eslint/no-explicit-any
    assert.equal(line.msg, 'request completed');
    assert.equal(line.req.url, r.url);
    assert.equal(line.req.method, r.body === undefined ? 'GET' : 'POST');
    assert.equal(line.res.statusCode, r.status);
    assert.equal(typeof line.responseTime, 'number');
  }
  assert.equal(lines.filter((l) => l.msg === 'incoming request').length, 0);
  for (const line of lines) {
    assert.match(String(line.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  }
});
