/** CORS (docs/api.md #conventions): the tracking endpoints answer any origin; the management API does not. */
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { after, before, describe, test } from 'node:test';
import { AUTH, payload, startService, type Service } from '../helpers.js';
import { expectStatus } from './support.js';

const ORIGIN = 'https://shop.example.com';

function listHeader(res: LightMyRequestResponse, name: string): string[] {
  return String(res.headers[name] ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
}

function assertAllowsOrigin(res: LightMyRequestResponse, origin = ORIGIN): void {
  const allowed = res.headers['access-control-allow-origin'];
  assert.ok(allowed === '*' || allowed === origin, `access-control-allow-origin: ${allowed}`);
}

describe('CORS', () => {
  let service: Service;
  before(async () => {
    service = await startService();
    await service.createSource();
  });
  after(() => service.close());

  const preflight = (url: string, origin: string, requestHeaders?: string) =>
    service.app.inject({
      method: 'OPTIONS',
      url,
      headers: {
        origin,
        'access-control-request-method': 'POST',
        ...(requestHeaders ? { 'access-control-request-headers': requestHeaders } : {}),
      },
    });

  for (const url of ['/track', '/track?profile_less=true', '/collect/page-view/src-1']) {
    test(`preflight OPTIONS ${url} allows any origin, POST, content-type and x-timestamp`, async () => {
      for (const origin of [ORIGIN, 'http://localhost:3000', 'null']) {
        for (const requested of ['content-type,x-timestamp', 'Content-Type, X-Timestamp', undefined]) {
          const res = await preflight(url, origin, requested);
          assert.ok(res.statusCode === 200 || res.statusCode === 204, `status ${res.statusCode}`);
          assertAllowsOrigin(res, origin);
          const headers = listHeader(res, 'access-control-allow-headers');
          assert.ok(headers.includes('content-type'), `allow-headers: ${headers}`);
          assert.ok(headers.includes('x-timestamp'), `allow-headers: ${headers}`);
          const methods = listHeader(res, 'access-control-allow-methods');
          assert.ok(methods.includes('post') || methods.includes('*'), `allow-methods: ${methods}`);
        }
      }
    });
  }

  test('a preflight stores nothing', async () => {
    await preflight('/collect/page-view/src-1', ORIGIN, 'content-type');
    const events = expectStatus(await service.get('/events?type=page-view'), 200);
    assert.deepEqual(events.result, []);
  });

  test('POST /track and /collect answers carry the allow-origin header', async () => {
    const tracked = await service.post('/track', payload(), {
      origin: ORIGIN,
      'x-timestamp': String(Date.now()),
    });
    expectStatus(tracked, 200);
    assertAllowsOrigin(tracked);
    const collected = await service.post('/collect/a/src-1', {}, { origin: ORIGIN });
    expectStatus(collected, 200);
    assertAllowsOrigin(collected);
  });

  test('error answers of the tracking endpoints carry it too, so that a browser can read them', async () => {
    const cases: [string, unknown][] = [
      ['/track', payload({ source: { id: 'nope' } })],
      ['/track', '{"broken":'],
      ['/track', { events: [] }],
      ['/collect/a/nope', {}],
      ['/collect/a/src-1', '[1]'],
      ['/track', JSON.stringify(payload({ properties: { pad: 'x'.repeat(1_100_000) } }))],
    ];
    for (const [url, body] of cases) {
      const res = await service.post(url, body, { origin: ORIGIN });
      assert.ok(res.statusCode >= 400, `${url}: ${res.statusCode}`);
      assertAllowsOrigin(res);
    }
  });

  test('management routes send no CORS headers', async () => {
    const routes: [string, string][] = [
      ['GET', '/events'],
      ['GET', '/event-sources'],
      ['GET', '/event-source/src-1'],
      ['GET', '/profile/x'],
      ['GET', '/session/x'],
      ['GET', '/event/x'],
      ['GET', '/event/management'],
    ];
    for (const [method, url] of routes) {
      const res = await service.app.inject({
        method: method as 'GET',
        url,
        headers: { origin: ORIGIN, ...AUTH },
      });
      assert.equal(res.headers['access-control-allow-origin'], undefined, `${method} ${url}`);
      const unauthenticated = await service.app.inject({
        method: method as 'GET',
        url,
        headers: { origin: ORIGIN },
      });
      assert.equal(
        unauthenticated.headers['access-control-allow-origin'],
        undefined,
        `${method} ${url} (401)`,
      );
    }
    const posted = await service.manage('POST', '/event-source', { id: 'cors' });
    assert.equal(posted.headers['access-control-allow-origin'], undefined);
  });

  test('a preflight to a management route is not allowed', async () => {
    for (const url of ['/events', '/event-source', '/profile/x']) {
      const res = await service.app.inject({
        method: 'OPTIONS',
        url,
        headers: {
          origin: ORIGIN,
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'authorization',
        },
      });
      assert.equal(res.headers['access-control-allow-origin'], undefined, url);
      assert.equal(res.headers['access-control-allow-headers'], undefined, url);
    }
  });
});

test('the preflight allows exactly content-type, content-encoding and x-timestamp, once each', async (t) => {
  const service = await startService();
  t.after(() => service.close());
  const res = await service.app.inject({
    method: 'OPTIONS',
    url: '/track',
    headers: {
      origin: 'https://site.example',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type,x-timestamp,x-anything',
    },
  });
  assert.equal(res.statusCode, 204);
  assert.equal(res.headers['access-control-allow-headers'], 'content-type, content-encoding, x-timestamp');
});
