/**
 * Takes the README's screenshot of the console (docs/console.png): a service on a fresh store receives
 * simulated traffic for a few minutes (so the chart spans several minutes), a visitor clicks through
 * the demo page, and the console's live view is captured.
 *
 *   npx tsx test/e2e/screenshot.ts [minutes=5]
 */
import { join } from 'node:path';
import { TOKEN } from '../helpers.js';
import { buildWeb, ensureChromium, launchBrowser, listen, ROOT, sleep } from './support.js';

const minutes = Number(process.argv[2] ?? 5);
const TYPES: [string, number, () => Record<string, unknown>][] = [
  ['page-view', 10, () => ({})],
  ['product-view', 6, () => ({ sku: `SKU-${Math.floor(Math.random() * 90) + 10}` })],
  ['search', 3, () => ({ query: ['shoes', 'jacket', 'socks', 'hat'][Math.floor(Math.random() * 4)] })],
  ['add-to-cart', 3, () => ({ sku: `SKU-${Math.floor(Math.random() * 90) + 10}`, price: 19.9 })],
  ['purchase', 1, () => ({ order: `A-${Math.floor(Math.random() * 9000) + 1000}`, price: 59.7 })],
];

ensureChromium();
buildWeb();
const running = await listen();
const { service } = running;
await service.createSource({ id: 'web', name: 'Web shop' });
await service.createSource({ id: 'demo', name: 'Demo page' });

const sessions = Array.from({ length: 12 }, (_, i) => `visit-${i}-${Date.now()}`);
const end = Date.now() + minutes * 60_000;
for (let tick = 0; Date.now() < end; tick++) {
  // Traffic rises and falls over the minutes.
  const load = 1 + Math.round(2 * (1 + Math.sin(tick / 12)));
  for (let i = 0; i < load; i++) {
    const events = TYPES.filter(([, weight]) => Math.random() * 10 < weight).map(([type, , properties]) => ({
      type,
      properties: properties(),
    }));
    if (events.length === 0) continue;
    const session = sessions[Math.floor(Math.random() * sessions.length)]!;
    await service.post('/track', {
      source: { id: 'web' },
      session: { id: session },
      context: { page: { url: 'https://shop.example/', path: '/' } },
      events,
    });
  }
  await sleep(3000);
}

const browser = await launchBrowser();
const visitor = await browser.newContext();
const demo = await visitor.newPage();
await demo.goto(`${running.base}/demo`);
for (const button of ['#click', '#add-to-cart', '#purchase']) {
  await demo.click(button);
  await sleep(400);
}
const admin = await browser.newContext({ viewport: { width: 1280, height: 860 } });
const page = await admin.newPage();
await page.goto(`${running.base}/console/`);
await page.fill('#token', TOKEN);
await page.click('#signin-submit');
await page.locator('#live-events tr[data-type="purchase"]').first().waitFor();
await page.locator('#chart-status', { hasText: 'in the last 30 minutes' }).waitFor();
await sleep(2500);
const path = join(ROOT, 'docs', 'console.png');
await page.screenshot({ path });
console.log(`wrote ${path}`);
await browser.close();
await service.close();
