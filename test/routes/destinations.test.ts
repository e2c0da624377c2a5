/** The destination management endpoints (docs/api.md#destination-endpoints). */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { buildApp } from '../../src/app.js';
import { defaultConfig } from '../../src/config.js';
import { AUTH, startService, tempDir, TOKEN } from '../helpers.js';
import { startReceiver, until } from '../support/receiver.js';
import { expectError, expectFieldError, expectStatus, type Json } from './support.js';

test('create with defaults: generated id and secret; replace keeps the secret; list, get, delete', async (t) => {
  const service = await startService();
  t.after(() => service.close());
  const created = expectStatus(
    await service.manage('POST', '/destination', { url: 'https://example.com/hook' }),
    200,
  );
  assert.match(created.id, /^[0-9a-f-]{36}$/);
  assert.match(created.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  assert.equal(Buffer.from(created.secret.slice(6), 'base64').length, 32);
  assert.deepEqual(
    { ...created, id: undefined, secret: undefined },
    {
      id: undefined,
      secret: undefined,
      name: '',
      url: 'https://example.com/hook',
      enabled: true,
      event_types: [],
      source_ids: [],
      batch_size: 100,
      headers: {},
    },
  );
  const other = expectStatus(await service.manage('POST', '/destination', { url: 'http://a.example/' }), 200);
  assert.notEqual(other.secret, created.secret, 'each destination gets its own secret');

  const replaced = expectStatus(
    await service.manage('POST', '/destination', { id: created.id, url: 'http://b.example/x', name: 'B' }),
    200,
  );
  assert.equal(replaced.secret, created.secret);
  assert.equal(replaced.name, 'B');
  const chosen = 'whsec_' + Buffer.alloc(24, 7).toString('base64');
  const rekeyed = expectStatus(
    await service.manage('POST', '/destination', {
      id: created.id,
      url: 'http://b.example/x',
      secret: chosen,
    }),
    200,
  );
  assert.equal(rekeyed.secret, chosen);

  const list = expectStatus(await service.get('/destinations'), 200);
  assert.equal(list.total, 2);
  assert.deepEqual(
    list.result.map((d: Json) => d.id),
    [created.id, other.id].sort(),
  );
  const one = expectStatus(await service.get(`/destination/${created.id}`), 200);
  assert.deepEqual(one, {
    ...rekeyed,
    status: { delivered: 0, pending: 0, failing_since: null, last_error: null, failed: 0 },
  });
  assert.deepEqual(expectStatus(await service.manage('DELETE', `/destination/${created.id}`), 200), {
    deleted: 1,
  });
  for (const [method, url] of [
    ['GET', `/destination/${created.id}`],
    ['DELETE', `/destination/${created.id}`],
    ['GET', `/destination/${created.id}/failed`],
    ['POST', `/destination/${created.id}/failed/msg_x/retry`],
  ] as const) {
    const detail = expectError(await service.manage(method, url), 404);
    assert.equal(detail, `Destination \`${created.id}\` not found`);
  }
  const missingBatch = await service.manage('POST', `/destination/${other.id}/failed/msg_x/retry`);
  assert.equal(expectError(missingBatch, 404), 'Failed batch `msg_x` not found');
});

test('invalid destinations are a 422 naming the field, and store nothing', async (t) => {
  const service = await startService();
  t.after(() => service.close());
  const url = 'https://example.com/';
  const cases: [Json, (string | number)[]][] = [
    [{}, ['url']],
    [{ url: 'ftp://example.com/' }, ['url']],
    [{ url: 'example.com/hook' }, ['url']],
    [{ url: 'http://' }, ['url']],
    [{ url: 'javascript:alert(1)' }, ['url']],
    [{ url: 42 }, ['url']],
    [{ url: 'x'.repeat(3000) }, ['url']],
    [{ url, id: 'has space' }, ['id']],
    [{ url, id: '' }, ['id']],
    [{ url, enabled: 'yes' }, ['enabled']],
    [{ url, event_types: 'purchase' }, ['event_types']],
    [{ url, event_types: [''] }, ['event_types', 0]],
    [{ url, source_ids: [1] }, ['source_ids', 0]],
    [{ url, batch_size: 0 }, ['batch_size']],
    [{ url, batch_size: 1001 }, ['batch_size']],
    [{ url, batch_size: 1.5 }, ['batch_size']],
    [{ url, headers: { 'x-a': 1 } }, ['headers', 'x-a']],
    [{ url, headers: { 'x-a': 'a\r\nb: c' } }, ['headers', 'x-a']],
    [{ url, headers: { 'bad header': 'v' } }, ['headers']],
    [{ url, headers: { 'Content-Type': 'text/plain' } }, ['headers', 'Content-Type']],
    [{ url, headers: { 'webhook-signature': 'v1,x' } }, ['headers', 'webhook-signature']],
    [{ url, secret: 'not-a-secret' }, ['secret']],
    [{ url, secret: 'whsec_' + Buffer.alloc(8).toString('base64') }, ['secret']],
    [{ url, secret: 'whsec_' + Buffer.alloc(100).toString('base64') }, ['secret']],
    [{ url, name: 5 }, ['name']],
  ];
  for (const [body, field] of cases) {
    const res = await service.manage('POST', '/destination', body);
    expectFieldError(res, field);
  }
  assert.equal(expectStatus(await service.get('/destinations'), 200).total, 0);
  expectFieldError(await service.get(`/destination/${'x'.repeat(200)}`), ['id']);
  expectFieldError(await service.get('/destination/a%20b'), ['id']);
});

test('the endpoints need the token', async (t) => {
  const service = await startService();
  t.after(() => service.close());
  for (const [method, url] of [
    ['POST', '/destination'],
    ['GET', '/destinations'],
    ['GET', '/destination/x'],
    ['DELETE', '/destination/x'],
    ['GET', '/destination/x/failed'],
    ['POST', '/destination/x/failed/y/retry'],
  ] as const) {
    const res = await service.app.inject({
      method,
      url,
      payload: method === 'POST' ? '{"url":"http://x/"}' : undefined,
    });
    assert.equal(res.statusCode, 401, `${method} ${url}`);
  }
});

test('secrets and headers are never logged, at any level, while delivering and failing', async (t) => {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const dataDir = tempDir();
  const receiver = await startReceiver();
  receiver.behave = (_r, i) => (i === 0 ? { status: 500 } : i === 1 ? { status: 400 } : { status: 200 });
  const app = await buildApp({
    config: {
      ...defaultConfig({ dataDir, accessLog: true, deliveryBackoffMinMs: 20, deliveryBackoffMaxMs: 50 }),
      apiToken: TOKEN,
    },
    logger: { level: 'trace', stream },
  });
  t.after(async () => {
    await app.close();
    await receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const secret = 'whsec_' + Buffer.alloc(32, 9).toString('base64');
  const header = 'Bearer very-private-receiver-token';
  const inject = (method: 'GET' | 'POST', url: string, payload?: unknown) =>
    app.inject({ method, url, headers: AUTH, payload: payload as object });
  await inject('POST', '/event-source', { id: 'web' });
  await inject('POST', '/destination', {
    id: 'd',
    url: receiver.url,
    secret,
    headers: { authorization: header },
    batch_size: 1,
  });
  await inject('POST', '/destination', { id: 'bad', url: 'ftp://x/', secret });
  for (let i = 0; i < 3; i++) {
    await app.inject({
      method: 'POST',
      url: '/track',
      payload: { source: { id: 'web' }, session: { id: `s${i}` }, events: [{ type: 'a' }] },
    });
  }
  await until(() => receiver.deliveredIds().length >= 2, 'delivered after failures');
  await inject('GET', '/destination/d');
  await inject('GET', '/destinations');
  const all = lines.join('');
  assert.match(all, /delivery failed; will retry/);
  assert.match(all, /batch moved to the failed list/);
  for (const hidden of [secret, secret.slice(6), 'very-private-receiver-token']) {
    assert.ok(!all.includes(hidden), `${hidden} appears in the logs`);
  }
});
