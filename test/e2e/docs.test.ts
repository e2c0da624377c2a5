/**
 * /docs in Chromium: the page runs under its Content Security Policy without a single error, every
 * response is named, and "Try it out" works with the examples as they are: authorize, create the
 * event source of the examples, send the tracking example.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { TOKEN } from '../helpers.js';
import { artifact, ensureChromium, launchBrowser, listen, storedEvents, type Running } from './support.js';

let browser: Browser;
let running: Running;
let page: Page;
const problems: string[] = [];

before(
  async () => {
    ensureChromium();
    browser = await launchBrowser();
    running = await listen();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
  },
  { timeout: 20 * 60_000 },
);

after(async () => {
  await browser?.close();
  await running?.service.close();
});

/** The operation block of `method path`, expanded. */
async function operation(method: string, path: string) {
  const block = page.locator(`.opblock-${method}:has(.opblock-summary-path[data-path="${path}"])`);
  if (!(await block.locator('.opblock-body').count())) await block.locator('.opblock-summary').click();
  await block.locator('.opblock-body').waitFor();
  return block;
}

/** "Try it out" with what the documentation fills in, then "Execute"; answers the status shown. */
async function tryItOut(method: string, path: string): Promise<string> {
  const block = await operation(method, path);
  await block.locator('.try-out__btn').click();
  await block.locator('.execute').click();
  const status = block.locator('.live-responses-table .response .response-col_status');
  await status.first().waitFor({ timeout: 15_000 });
  return (await status.first().textContent())?.trim() ?? '';
}

test('the documentation page loads with no console error, and every response is named', async () => {
  await page.goto(`${running.base}/docs`);
  await page.waitForSelector('.opblock');
  for (const summary of await page.locator('.opblock-summary').all()) await summary.click();
  await page.locator('.opblock-body').first().waitFor();
  assert.equal(await page.getByText('Default Response', { exact: true }).count(), 0);
  // Request bodies start from their example, not from a generated one.
  const track = await operation('post', '/track');
  assert.match(String(await track.locator('.body-param__example, .example').first().textContent()), /"demo"/);
  await page.screenshot({ path: artifact('docs.png') });
});

test('"Try it out" with the examples: authorize, create the source, send events', async () => {
  await page.locator('.btn.authorize').first().click();
  await page.locator('.auth-container input').first().fill(TOKEN);
  await page.locator('.auth-btn-wrapper .authorize').first().click();
  await page.locator('.auth-btn-wrapper .btn-done, .btn-done').first().click();

  assert.equal(await tryItOut('post', '/event-source'), '200');
  assert.equal(await tryItOut('post', '/track'), '200');
  assert.equal(await tryItOut('post', '/collect/{event_type}/{source_id}'), '200');
  const events = await storedEvents(running, { source_id: 'demo' });
  assert.deepEqual(events.map((e) => e.type).sort(), ['coupon-received', 'page-view']);
  await page.screenshot({ path: artifact('docs-try-it-out.png') });
});

test('nothing was reported in the browser console (no Content Security Policy violation)', () => {
  assert.deepEqual(problems, []);
});
