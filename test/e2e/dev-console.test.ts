/**
 * `npm run dev:console`: the console served from its sources by Vite's dev server, in front of a
 * running service through a proxy; signing in and listing sources go through to the service.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { createServer, type ViteDevServer } from 'vite';
import { TOKEN } from '../helpers.js';
import { freePort, ROOT } from '../support/process.js';
import { ensureChromium, launchBrowser, listen, type Running } from './support.js';

let running: Running;
let dev: ViteDevServer;
let devUrl: string;
let browser: Browser;

before(
  async () => {
    ensureChromium();
    running = await listen();
    await running.service.createSource({ id: 'through-the-proxy' });
    const port = await freePort();
    // What `npm run dev:console` reads from the environment.
    process.env.TRACK_URL = running.base;
    process.env.CONSOLE_PORT = String(port);
    dev = await createServer({ configFile: `${ROOT}console/vite.config.mjs`, logLevel: 'silent' });
    await dev.listen();
    devUrl = `http://127.0.0.1:${port}`;
    browser = await launchBrowser();
  },
  { timeout: 20 * 60_000 },
);

after(async () => {
  await browser?.close();
  await dev?.close();
  await running?.service.close();
});

test('the console comes from its sources; the API goes through the proxy to the service', async () => {
  const index = await fetch(`${devUrl}/console/`);
  assert.equal(index.status, 200);
  const html = await index.text();
  assert.match(html, /\/console\/@vite\/client/, 'served by the dev server (live reload)');
  assert.match(html, /src\/main\.ts/);
  const sources = await fetch(`${devUrl}/event-sources`, { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(sources.status, 200);
  assert.deepEqual(
    ((await sources.json()) as { result: { id: string }[] }).result.map((s) => s.id),
    ['through-the-proxy'],
  );
  assert.equal((await fetch(`${devUrl}/health`)).status, 200);
});

test('in a browser: sign in and see the sources of the running service', async () => {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(`${devUrl}/console/`);
  await page.fill('#token', TOKEN);
  await page.click('#signin-submit');
  await page.waitForSelector('main[data-view="events"]');
  await page.click('nav a[data-route="sources"]');
  await page.waitForSelector('#sources tr[data-id="through-the-proxy"]');
  assert.deepEqual(errors, []);
});
