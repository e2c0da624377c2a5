/** Management API authentication (docs/api.md #settings TRACK_API_TOKEN, §7). */
import assert from 'node:assert/strict';
import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { defaultConfig } from '../../src/config.js';
import { resolveApiToken } from '../../src/token.js';
import { AUTH, payload, startService, tempDir, TOKEN, type Service } from '../helpers.js';
import { expectStatus, type Json } from './support.js';

type Method = 'GET' | 'POST' | 'DELETE';

/** Every endpoint marked "token" in docs/api.md #conventions, with a body where it takes one. */
const TOKEN_ROUTES: [Method, string, unknown?][] = [
  ['POST', '/event/management', { event_type: 'purchase' }],
  ['GET', '/event/management'],
  ['GET', '/event/management/purchase'],
  ['DELETE', '/event/management/purchase'],
  ['POST', '/event-source', { id: 'x' }],
  ['GET', '/event-sources'],
  ['GET', '/event-source/src-1'],
  ['DELETE', '/event-source/src-1'],
  ['GET', '/event/some-id'],
  ['GET', '/session/some-id'],
  ['GET', '/profile/some-id'],
  ['GET', '/events'],
  ['GET', '/events?limit=5&type=a'],
  ['GET', '/events/stats'],
  ['DELETE', '/profile/some-id'],
];

const PUBLIC_PATHS = new Set(['/', '/track', '/collect/{event_type}/{source_id}', '/health']);

describe('management API authentication', () => {
  let service: Service;
  before(async () => {
    service = await startService();
    await service.createSource();
  });
  after(() => service.close());

  const send = (method: Method, url: string, body: unknown, headers: Record<string, string>) =>
    service.app.inject({
      method,
      url,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      payload: body === undefined ? undefined : JSON.stringify(body),
    });

  const BAD_HEADERS: [string, Record<string, string>][] = [
    ['no header', {}],
    ['wrong token', { authorization: 'Bearer wrong-token' }],
    ['token with a suffix', { authorization: `Bearer ${TOKEN}x` }],
    ['token prefix', { authorization: `Bearer ${TOKEN.slice(0, -1)}` }],
    ['no scheme', { authorization: TOKEN }],
    ['basic scheme', { authorization: `Basic ${Buffer.from(`user:${TOKEN}`).toString('base64')}` }],
    ['empty bearer', { authorization: 'Bearer ' }],
    ['token in another header', { 'x-api-key': TOKEN }],
  ];

  for (const [method, url, body] of TOKEN_ROUTES) {
    test(`${method} ${url} without a valid token is 401 "Not authenticated"`, async () => {
      for (const [what, headers] of BAD_HEADERS) {
        const res = await send(method, url, body, headers);
        assert.equal(res.statusCode, 401, `${what}: ${res.statusCode} ${res.body}`);
        assert.deepEqual(res.json(), { detail: 'Not authenticated' }, what);
        assert.match(String(res.headers['content-type']), /^application\/json/);
      }
    });
  }

  test('every documented route except the public ones requires the token', async () => {
    const doc = expectStatus(await service.app.inject({ method: 'GET', url: '/docs/json' }), 200);
    let checked = 0;
    for (const [path, operations] of Object.entries(doc.paths as Record<string, Json>)) {
      if (PUBLIC_PATHS.has(path)) continue;
      for (const method of Object.keys(operations)) {
        const url = path.replace(/\{[^}]+\}/g, 'some-id');
        const res = await service.app.inject({ method: method.toUpperCase() as Method, url });
        assert.equal(res.statusCode, 401, `${method} ${path}: ${res.statusCode}`);
        assert.deepEqual(res.json(), { detail: 'Not authenticated' });
        checked++;
      }
    }
    assert.ok(checked >= TOKEN_ROUTES.length - 1, `only ${checked} routes checked`);
  });

  test('authentication is checked before the body is parsed or validated', async () => {
    const broken = await service.app.inject({
      method: 'POST',
      url: '/event-source',
      headers: { 'content-type': 'application/json' },
      payload: '{"id": ',
    });
    assert.equal(broken.statusCode, 401);
    const invalid = await send('POST', '/event-source', { id: 5 }, {});
    assert.equal(invalid.statusCode, 401);
    const badQuery = await send('GET', '/events?limit=99999', undefined, {});
    assert.equal(badQuery.statusCode, 401);
  });

  test('a refused request changes nothing', async () => {
    await send('POST', '/event-source', { id: 'sneaky' }, {});
    await send('DELETE', '/event-source/src-1', undefined, { authorization: 'Bearer nope' });
    assert.equal((await service.get('/event-source/sneaky')).statusCode, 404);
    assert.equal((await service.get('/event-source/src-1')).statusCode, 200);
  });

  test('with the token the management API answers', async () => {
    expectStatus(await send('GET', '/event-sources', undefined, AUTH), 200);
    expectStatus(await send('POST', '/event-source', { id: 'temporary' }, AUTH), 200);
    expectStatus(await send('DELETE', '/event-source/temporary', undefined, AUTH), 200);
  });

  test('the tracking endpoints, /health and /docs need no token', async () => {
    expectStatus(await service.post('/track', payload()), 200);
    expectStatus(await service.post('/collect/a/src-1', {}), 200);
    expectStatus(await service.app.inject({ method: 'GET', url: '/health' }), 200);
    expectStatus(await service.app.inject({ method: 'GET', url: '/docs/json' }), 200);
    const docs = await service.app.inject({ method: 'GET', url: '/docs' });
    assert.ok(
      docs.statusCode === 200 || (docs.statusCode >= 300 && docs.statusCode < 400),
      `${docs.statusCode}`,
    );
  });

  test('a token sent to the tracking endpoints is not required nor harmful', async () => {
    expectStatus(await service.post('/track', payload(), { authorization: 'Bearer whatever' }), 200);
  });
});

describe('generated token (TRACK_API_TOKEN unset)', () => {
  test('is created once in the data folder with mode 0600 and kept across starts', () => {
    const dataDir = join(tempDir(), 'nested', 'data');
    try {
      const first = resolveApiToken(defaultConfig({ dataDir, apiToken: undefined }));
      assert.equal(first.file, join(dataDir, 'api-token'));
      assert.ok(first.token.length >= 32, 'token is long enough to resist guessing');
      assert.equal(readFileSync(first.file!, 'utf8').trim(), first.token);
      assert.equal(statSync(first.file!).mode & 0o777, 0o600);
      const second = resolveApiToken(defaultConfig({ dataDir, apiToken: undefined }));
      assert.equal(second.token, first.token);
      assert.equal(statSync(first.file!).mode & 0o777, 0o600);
    } finally {
      rmSync(join(dataDir, '..', '..'), { recursive: true, force: true });
    }
  });

  test('differs between data folders', () => {
    const a = tempDir();
    const b = tempDir();
    try {
      const ta = resolveApiToken(defaultConfig({ dataDir: a })).token;
      const tb = resolveApiToken(defaultConfig({ dataDir: b })).token;
      assert.notEqual(ta, tb);
    } finally {
      rmSync(a, { recursive: true, force: true });
      rmSync(b, { recursive: true, force: true });
    }
  });

  test('TRACK_API_TOKEN set: that token, and no file is written', () => {
    const dataDir = tempDir();
    try {
      const resolved = resolveApiToken(defaultConfig({ dataDir, apiToken: 'chosen' }));
      assert.deepEqual(resolved, { token: 'chosen', file: null });
      assert.throws(() => statSync(join(dataDir, 'api-token')));
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('the generated token is the one the service accepts', async () => {
    const dataDir = tempDir();
    const { token } = resolveApiToken(defaultConfig({ dataDir }));
    const service = await startService({ dataDir, apiToken: token });
    try {
      const ok = await service.app.inject({
        method: 'GET',
        url: '/event-sources',
        headers: { authorization: `Bearer ${token}` },
      });
      expectStatus(ok, 200);
      const refused = await service.app.inject({ method: 'GET', url: '/event-sources', headers: AUTH });
      assert.equal(refused.statusCode, 401);
    } finally {
      await service.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
