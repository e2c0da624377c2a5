/** The web plugin over HTTP, without a browser: headers, caching, escaping, and unbuilt assets (503). */
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import webRoutes from '../../src/routes/web.js';
import { startService, tempDir, type Service } from '../helpers.js';

const TRACKER = '(()=>{window.tracker={track(){}}})();';

async function webApp(publicDir: string): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  await app.register(webRoutes, { publicDir });
  return app;
}

describe('web routes with built assets', () => {
  let dir: string;
  let app: FastifyInstance;

  before(async () => {
    dir = tempDir('web-public-');
    mkdirSync(join(dir, 'console', 'assets'), { recursive: true });
    writeFileSync(join(dir, 'tracker.js'), TRACKER);
    writeFileSync(
      join(dir, 'demo.html'),
      '<script src="/tracker.js" data-source="__SOURCE__" async></script><code>__SOURCE__</code>',
    );
    writeFileSync(join(dir, 'demo.js'), 'void 0;');
    writeFileSync(join(dir, 'demo.css'), 'body{}');
    writeFileSync(join(dir, 'console', 'index.html'), '<!doctype html><title>Console</title>');
    writeFileSync(join(dir, 'console', 'assets', 'index-abc.js'), 'void 0;');
    app = await webApp(dir);
  });

  after(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('GET /tracker.js: JavaScript, loadable from any site, cached briefly, revalidated by etag', async () => {
    const res = await app.inject({ method: 'GET', url: '/tracker.js' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, TRACKER);
    assert.match(String(res.headers['content-type']), /^text\/javascript/);
    assert.equal(res.headers['cache-control'], 'public, max-age=300');
    assert.equal(res.headers['access-control-allow-origin'], '*');
    assert.equal(res.headers['cross-origin-resource-policy'], 'cross-origin');
    assert.equal(res.headers['content-security-policy'], undefined);
    const etag = String(res.headers.etag);
    const again = await app.inject({ method: 'GET', url: '/tracker.js', headers: { 'if-none-match': etag } });
    assert.equal(again.statusCode, 304);

    // A rebuild is served without a restart.
    writeFileSync(join(dir, 'tracker.js'), `${TRACKER}//v2`);
    const rebuilt = await app.inject({
      method: 'GET',
      url: '/tracker.js',
      headers: { 'if-none-match': etag },
    });
    assert.equal(rebuilt.statusCode, 200);
    assert.match(rebuilt.body, /\/\/v2$/);
    assert.notEqual(rebuilt.headers.etag, etag);
  });

  test('GET /demo: the source id comes from ?source= (default demo), escaped into the page', async () => {
    let res = await app.inject({ method: 'GET', url: '/demo' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assert.match(res.body, /data-source="demo"/);
    assert.match(String(res.headers['content-security-policy']), /script-src 'self'/);

    res = await app.inject({
      method: 'GET',
      url: `/demo?source=${encodeURIComponent('x"><script>alert(1)</script>')}`,
    });
    assert.equal(res.statusCode, 200);
    assert.ok(!res.body.includes('<script>alert'), res.body);
    assert.match(res.body, /data-source="x&quot;&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;"/);

    for (const [url, type] of [
      ['/demo.js', /^text\/javascript/],
      ['/demo.css', /^text\/css/],
    ] as const) {
      const asset = await app.inject({ method: 'GET', url });
      assert.equal(asset.statusCode, 200, url);
      assert.match(String(asset.headers['content-type']), type);
    }
  });

  test('GET /console redirects to the console, served with security headers and cache rules', async () => {
    const redirect = await app.inject({ method: 'GET', url: '/console' });
    assert.equal(redirect.statusCode, 302);
    assert.equal(redirect.headers.location, '/console/');

    const index = await app.inject({ method: 'GET', url: '/console/' });
    assert.equal(index.statusCode, 200);
    assert.match(index.body, /<title>Console<\/title>/);
    const csp = String(index.headers['content-security-policy']);
    for (const directive of [
      "default-src 'self'",
      "script-src 'self'",
      "connect-src 'self'",
      "frame-ancestors 'none'",
    ]) {
      assert.ok(csp.includes(directive), `${directive} in ${csp}`);
    }
    assert.ok(!csp.includes('unsafe'), csp);
    assert.equal(index.headers['x-content-type-options'], 'nosniff');
    assert.equal(index.headers['cache-control'], 'no-cache');

    const asset = await app.inject({ method: 'GET', url: '/console/assets/index-abc.js' });
    assert.equal(asset.statusCode, 200);
    assert.equal(asset.headers['cache-control'], 'public, max-age=31536000, immutable');

    assert.equal((await app.inject({ method: 'GET', url: '/console/assets/nope.js' })).statusCode, 404);
    // Nothing outside the console folder (demo.html is only served through GET /demo).
    for (const url of [
      '/console/%2e%2e/demo.html',
      '/console/..%2fdemo.html',
      '/console/%2e%2e%2fdemo.html',
    ]) {
      const outside = await app.inject({ method: 'GET', url });
      assert.ok(
        [400, 403, 404].includes(outside.statusCode),
        `${url}: ${outside.statusCode} ${outside.body}`,
      );
    }
  });
});

describe('web routes without built assets', () => {
  let dir: string;
  let app: FastifyInstance;

  before(async () => {
    dir = tempDir('web-empty-');
    app = await webApp(dir);
  });

  after(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('every page answers 503 with a detail saying to run npm run build', async () => {
    for (const url of ['/tracker.js', '/demo', '/demo.js', '/console', '/console/', '/console/assets/x.js']) {
      const res = await app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 503, url);
      assert.match(res.json().detail, /npm run build/, url);
    }
  });
});

describe('web routes in the service', () => {
  let service: Service;

  before(async () => {
    service = await startService();
  });

  after(() => service.close());

  test('the tracking endpoints do not get the pages security headers', async () => {
    await service.createSource({ id: 'src-1' });
    const track = await service.post('/track', {
      source: { id: 'src-1' },
      session: { id: 'web-routes-session' },
      events: [{ type: 'page-view' }],
    });
    assert.equal(track.statusCode, 200);
    assert.equal(track.headers['content-security-policy'], undefined);
    assert.equal(track.headers['x-frame-options'], undefined);
    // (302 to the console when it is built, 503 before: the browser tests may be building it meanwhile.)
    const page = await service.app.inject({ method: 'GET', url: '/console' });
    assert.ok([302, 503].includes(page.statusCode), String(page.statusCode));
    assert.match(String(page.headers['content-security-policy']), /default-src 'self'/);
  });

  test('a source id over 128 characters is refused by the demo page (422)', async () => {
    const res = await service.app.inject({ method: 'GET', url: `/demo?source=${'x'.repeat(129)}` });
    assert.equal(res.statusCode, 422);
  });
});
