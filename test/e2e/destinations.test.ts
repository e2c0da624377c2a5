/**
 * The console's destinations page in Chromium against a real receiver: create a destination, watch
 * it fail and recover, disable and enable it, and send a failed batch again.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { startService, TOKEN, type Service } from '../helpers.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { artifact, buildWeb, ensureChromium, launchBrowser } from './support.js';

let browser: Browser;
let service: Service;
let receiver: Receiver;
let base = '';
let page: Page;
const pageErrors: string[] = [];

before(
  async () => {
    ensureChromium();
    buildWeb();
    browser = await launchBrowser();
    receiver = await startReceiver();
    service = await startService({ deliveryBackoffMinMs: 50, deliveryBackoffMaxMs: 300 });
    await service.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(service.app.server.address() as AddressInfo).port}`;
    await service.createSource({ id: 'web' });
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
  },
  { timeout: 20 * 60_000 },
);

after(async () => {
  await browser?.close();
  await service?.close();
  await receiver?.close();
});

async function track(count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const res = await service.post('/track', {
      source: { id: 'web' },
      session: { id: `console-${Math.random()}` },
      events: [{ type: 'page-view' }],
    });
    assert.equal(res.statusCode, 200);
  }
}

const row = '#destinations tr[data-id="crm"]';
const text = async (selector: string) => (await page.textContent(selector))?.trim() ?? '';
const waitText = (selector: string, expected: string) =>
  page.waitForFunction(
    ([s, e]) => document.querySelector(s!)?.textContent?.trim() === e,
    [selector, expected] as const,
    { timeout: 20_000 },
  );

test('create, watch failing and pending, disable and enable, retry a failed batch', async () => {
  await page.goto(`${base}/console/`);
  await page.fill('#token', TOKEN);
  await page.click('#signin-submit');
  await page.click('nav a[data-route="destinations"]');
  await page.waitForSelector('main[data-view="destinations"]');

  await page.fill('#destination-id', 'crm');
  await page.fill('#destination-name', 'CRM');
  await page.fill('#destination-url', receiver.url);
  await page.click('#destination-create');
  await page.waitForSelector(`${row} .badge.on`);
  assert.match(await text('#destination-secret'), /Signing secret of crm: whsec_/);

  // The receiver is down: the row shows it failing, with the events pending.
  receiver.behave = () => ({ status: 503 });
  await track(3);
  await page.waitForSelector(`${row} .badge.failing`, { timeout: 20_000 });
  await waitText(`${row} .pending`, '3');
  assert.match(await text(`${row} .last-error`), /HTTP 503/);
  await page.screenshot({ path: artifact('console-destinations-failing.png') });

  // It comes back: everything is delivered and the row is healthy again.
  receiver.behave = () => ({ status: 200 });
  await waitText(`${row} .delivered`, '3');
  await waitText(`${row} .pending`, '0');
  await page.waitForSelector(`${row} .badge.failing`, { state: 'detached' });
  assert.equal(receiver.deliveredIds().length, 3);

  // Disabled, events wait; enabled, they are delivered.
  await page.click(`${row} button.toggle`);
  await page.waitForSelector(`${row} .badge.off`);
  await track(1);
  await waitText(`${row} .pending`, '1');
  assert.equal(receiver.deliveredIds().length, 3);
  await page.click(`${row} button.toggle`);
  await page.waitForSelector(`${row} .badge.on`);
  await waitText(`${row} .delivered`, '4');

  // A 400 moves the batch to the failed list; Retry sends it again.
  receiver.behave = () => ({ status: 400 });
  await track(1);
  await page.waitForFunction(
    (s) => document.querySelector(s)?.textContent?.includes('Failed batches (1)'),
    `${row} button.show-failed`,
    { timeout: 20_000 },
  );
  await page.click(`${row} button.show-failed`);
  await page.waitForSelector('tr[data-failed-of="crm"] li[data-batch] button.retry');
  await page.screenshot({ path: artifact('console-destinations-failed.png') });
  receiver.behave = () => ({ status: 200 });
  await page.click('tr[data-failed-of="crm"] li[data-batch] button.retry');
  await page.waitForSelector('#flash:text("delivered")');
  await waitText(`${row} .delivered`, '5');
  await page.waitForSelector('tr[data-failed-of="crm"] li[data-batch]', { state: 'detached' });
  assert.equal(receiver.deliveredIds().length, 5);
  assert.deepEqual(pageErrors, []);
});
