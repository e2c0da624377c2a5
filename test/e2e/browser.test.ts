/**
 * End to end, in headless Chromium: the tracker on a customer's site (another origin) and on the demo
 * page, and the web console driven like a person would. Screenshots go to test-artifacts/.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page, Response } from 'playwright-core';
import { TOKEN } from '../helpers.js';
import {
  artifact,
  buildWeb,
  ensureChromium,
  eventually,
  launchBrowser,
  listen,
  read,
  sleep,
  startSite,
  storedEvents,
  type Json,
  type Running,
  type Site,
} from './support.js';

let browser: Browser;
/** The service the current describe block runs against (each has its own, on a fresh store). */
let running: Running;

before(
  async () => {
    ensureChromium();
    buildWeb();
    browser = await launchBrowser();
  },
  { timeout: 20 * 60_000 },
);

after(async () => {
  await browser?.close();
});

/** The bodies of the POST /track requests made by fetch in a context (beacons are not reported). */
function trackBodies(context: BrowserContext): Json[] {
  const base = running.base;
  const bodies: Json[] = [];
  context.on('request', (request) => {
    if (request.method() === 'POST' && request.url() === `${base}/track`) {
      bodies.push(JSON.parse(request.postData() ?? 'null'));
    }
  });
  return bodies;
}

const isTrack = (response: Response) =>
  response.url() === `${running.base}/track` && response.request().method() === 'POST';

let site: Site;

/** A page of the customer's site with the tracker; `head` runs before it, through the queueing stub. */
function shopPage(
  path: string,
  options: { attrs?: Record<string, string>; head?: string; body?: string } = {},
) {
  const attrs = Object.entries({ 'data-source': 'web', ...options.attrs })
    .map(([name, value]) => `${name}="${value}"`)
    .join(' ');
  site.pages.set(
    path,
    `<!doctype html><html><head><title>Shop ${path}</title>
<script>window.tracker = window.tracker || { q: [], track: function () { this.q.push(arguments); } };</script>
${options.head ?? ''}
<script src="${running.base}/tracker.js" ${attrs} async></script>
</head><body><h1>Shop</h1>${options.body ?? ''}</body></html>`,
  );
  return `${site.origin}${path}`;
}

const ALLOWED_KEYS = new Set([
  'source',
  'session',
  'profile',
  'context',
  'properties',
  'events',
  'options',
  'sent_at',
]);

describe('browser tracker', () => {
  before(async () => {
    running = await listen();
    await running.service.createSource({ id: 'web', name: 'Shop' });
    site = await startSite();
  });

  after(async () => {
    await site?.close();
    await running?.service.close();
  });

  test('events of a page load go out in one /track call, with the page context, session cookie and profile', async () => {
    const context = await browser.newContext({ locale: 'en-GB', viewport: { width: 1024, height: 700 } });
    const bodies = trackBodies(context);
    try {
      const url = shopPage('/batch', {
        head: `<script>tracker.track('early', { n: 1 });
document.addEventListener('DOMContentLoaded', function () { tracker.track('ready', { n: 2 }); });
addEventListener('load', function () { tracker.track('loaded', { n: 3 }); });</script>`,
      });
      const page = await context.newPage();
      const first = page.waitForResponse(isTrack);
      await page.goto(url, { referer: 'https://search.example/?q=shop' });
      const answer = await (await first).json();
      await sleep(800);

      assert.equal(bodies.length, 1, 'one request for the whole page load');
      const body = bodies[0]!;
      for (const key of Object.keys(body)) assert.ok(ALLOWED_KEYS.has(key), `unexpected key ${key}`);
      assert.deepEqual(
        body.events.map((e: Json) => [e.type, e.properties]),
        [
          ['page-view', {}],
          ['early', { n: 1 }],
          ['ready', { n: 2 }],
          ['loaded', { n: 3 }],
        ],
      );
      assert.equal(body.source.id, 'web');
      assert.equal(body.profile, undefined, 'no profile id on a first visit');
      assert.deepEqual(body.context.page, {
        url,
        path: '/batch',
        title: 'Shop /batch',
        referrer: 'https://search.example/?q=shop',
      });
      assert.equal(body.context.browser.language, 'en-GB');
      assert.deepEqual(body.context.screen, { width: 1024, height: 700 });
      assert.equal(body.events[0].context.page.path, '/batch');
      // Each event has its own id and the time it was queued; the request the time it was sent.
      const ids = body.events.map((e: Json) => e.id as string);
      assert.equal(new Set(ids).size, 4);
      // UUID version 7: the time it was made (to the millisecond) leads, so ids sort by time.
      const madeAt = (id: string) => parseInt(id.replace('-', '').slice(0, 12), 16);
      for (const id of [...ids, body.session.id as string]) {
        assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        assert.ok(Math.abs(madeAt(id) - Date.now()) < 60_000, `${id} made now`);
      }
      for (const e of body.events as Json[]) {
        assert.ok(madeAt(e.id) <= Date.parse(e.timestamp), 'id made when queued');
        assert.ok(Date.parse(e.timestamp) <= Date.parse(body.sent_at), 'queued before sent');
      }
      assert.ok(Math.abs(Date.parse(body.sent_at) - Date.now()) < 60_000);

      // The session id is a first-party cookie that expires after 30 minutes without activity.
      const [cookie] = (await context.cookies(site.origin)).filter((c) => c.name === 'ec_sid');
      assert.ok(cookie, 'session cookie set');
      assert.equal(cookie.value, body.session.id);
      assert.ok(Math.abs(cookie.expires - (Date.now() / 1000 + 1800)) < 60, `expires ${cookie.expires}`);
      // The profile id the service answered is kept in localStorage.
      assert.equal(await page.evaluate("localStorage.getItem('ec_pid')"), answer.profile.id);
      const stored = await storedEvents(running, { session_id: body.session.id });
      assert.equal(stored.length, 4);
      assert.equal(stored[0]!.profile.id, answer.profile.id);
      assert.deepEqual(stored.map((e) => e.metadata.client_id).sort(), [...ids].sort());
      for (const e of stored) assert.equal(e.metadata.time.source, 'device');
      // The session knows the browser it was made by (headless Chromium reads as a bot).
      const session = await read(running, `/session/${body.session.id}`);
      assert.equal(session.os.name, 'Linux');
      assert.equal(session.device.geo.country.code, null, 'a loopback address has no country');

      // Later events are batched too, and carry the profile id.
      await page.evaluate(
        "tracker.track('add-to-cart', { sku: 'A' }); tracker.track('add-to-cart', { sku: 'B' })",
      );
      await eventually('the second request', () => bodies.length === 2);
      await sleep(400);
      assert.equal(bodies.length, 2);
      assert.deepEqual(
        bodies[1]!.events.map((e: Json) => e.properties.sku),
        ['A', 'B'],
      );
      assert.deepEqual(bodies[1]!.profile, { id: answer.profile.id });
      assert.equal(bodies[1]!.session.id, body.session.id);
    } finally {
      await context.close();
    }
  });

  test('the stored profile id is replaced when the service answers with another one', async () => {
    const context = await browser.newContext();
    const bodies = trackBodies(context);
    try {
      const url = shopPage('/replace');
      await context.addInitScript(
        "try { localStorage.setItem('ec_pid', 'profile-that-does-not-exist') } catch {}",
      );
      const page = await context.newPage();
      const first = page.waitForResponse(isTrack);
      await page.goto(url);
      const answer = await (await first).json();
      assert.deepEqual(bodies[0]!.profile, { id: 'profile-that-does-not-exist' });
      assert.notEqual(answer.profile.id, 'profile-that-does-not-exist');
      await eventually(
        'localStorage to hold the new id',
        async () => (await page.evaluate("localStorage.getItem('ec_pid')")) === answer.profile.id,
      );
    } finally {
      await context.close();
    }
  });

  test('events still queued when the page is left go out with sendBeacon', async () => {
    const context = await browser.newContext();
    const bodies = trackBodies(context);
    try {
      // Counts sendBeacon calls in localStorage, which outlives the page.
      await context.addInitScript(`(() => {
        const send = navigator.sendBeacon.bind(navigator);
        navigator.sendBeacon = (url, data) => {
          localStorage.setItem('beacons', String(Number(localStorage.getItem('beacons') || 0) + 1));
          return send(url, data);
        };
      })()`);
      const url = shopPage('/leave');
      site.pages.set('/elsewhere', '<!doctype html><title>Elsewhere</title><p>no tracker here</p>');
      const page = await context.newPage();
      const first = page.waitForResponse(isTrack);
      await page.goto(url);
      await first;
      await page.evaluate("tracker.track('leaving', { from: 'leave' })");
      await page.goto(`${site.origin}/elsewhere`);

      const stored = await eventually('the beacon to be stored', async () => {
        const found = await storedEvents(running, { type: 'leaving' });
        return found.length > 0 && found;
      });
      assert.equal(stored.length, 1);
      assert.deepEqual(stored[0]!.properties, { from: 'leave' });
      assert.equal(await page.evaluate("localStorage.getItem('beacons')"), '1');
      assert.ok(!bodies.some((b) => b.events.some((e: Json) => e.type === 'leaving')), 'not sent by fetch');
    } finally {
      await context.close();
    }
  });

  test('a request is retried after a network error and a 503, never after a 4xx', async () => {
    const cors = { 'access-control-allow-origin': '*' };

    // Network error, then 503, then the real service.
    const flaky = await browser.newContext();
    let attempts = 0;
    await flaky.route(`${running.base}/track`, async (route) => {
      attempts++;
      if (attempts === 1) return route.abort('failed');
      if (attempts === 2) {
        return route.fulfill({
          status: 503,
          headers: { ...cors, 'retry-after': '1' },
          json: { detail: 'busy' },
        });
      }
      return route.continue();
    });
    // A 401 from the service itself (unknown source), and a 429 and a 400 answered for it.
    const refused = await browser.newContext();
    const refusedBodies = trackBodies(refused);
    const limited = await browser.newContext();
    const limitedBodies = trackBodies(limited);
    const statuses = [429, 400];
    await limited.route(`${running.base}/track`, (route) =>
      route.fulfill({ status: statuses.shift() ?? 400, headers: cors, json: { detail: 'no' } }),
    );
    try {
      const flakyPage = await flaky.newPage();
      await flakyPage.goto(shopPage('/retry', { head: "<script>tracker.track('retry-me')</script>" }));
      await (
        await refused.newPage()
      ).goto(shopPage('/refused', { attrs: { 'data-source': 'no-such-source' } }));
      const limitedPage = await limited.newPage();
      await limitedPage.goto(shopPage('/limited'));
      await sleep(500);
      await limitedPage.evaluate("tracker.track('second')");

      const stored = await eventually('the retried request to be stored', async () => {
        const found = await storedEvents(running, { type: 'retry-me' });
        return found.length > 0 && found;
      });
      await sleep(2500); // longer than the first two back-off delays (0.5 s, 1 s)
      assert.equal(attempts, 3, 'network error, 503, then accepted');
      assert.equal((await storedEvents(running, { type: 'retry-me' })).length, stored.length);
      assert.equal(stored.length, 1, 'stored once');
      assert.equal(refusedBodies.length, 1, '401: not retried');
      assert.equal(limitedBodies.length, 2, '429 and 400: not retried (one request per batch)');
      assert.deepEqual(
        limitedBodies.map((b) => b.events.map((e: Json) => e.type)),
        [['page-view'], ['second']],
      );
    } finally {
      await Promise.all([flaky.close(), refused.close(), limited.close()]);
    }
  });

  test('the first answer is lost: the retry carries the same event ids and each event is stored once', async () => {
    const context = await browser.newContext();
    const bodies = trackBodies(context);
    let attempts = 0;
    await context.route(`${running.base}/track`, async (route) => {
      attempts++;
      if (attempts === 1) {
        // The request reaches the service and is stored, but its answer never reaches the page.
        const delivered = await route.fetch();
        assert.equal(delivered.status(), 200);
        return route.abort('failed');
      }
      return route.continue();
    });
    try {
      const page = await context.newPage();
      await page.goto(shopPage('/lost', { head: "<script>tracker.track('lost-answer', { n: 1 })</script>" }));
      await eventually('the retry', () => attempts >= 2);
      await sleep(300);
      assert.equal(bodies.length, 2, 'one request, sent twice');
      const [first, retry] = bodies as [Json, Json];
      assert.deepEqual(
        retry.events.map((e: Json) => [e.id, e.timestamp]),
        first.events.map((e: Json) => [e.id, e.timestamp]),
        'same ids and timestamps',
      );
      assert.ok(Date.parse(retry.sent_at) > Date.parse(first.sent_at), 'sent_at is set on each attempt');
      const stored = await eventually('the events', async () => {
        const found = await storedEvents(running, { session_id: first.session.id });
        return found.length >= 2 && found;
      });
      await sleep(500);
      assert.equal((await storedEvents(running, { session_id: first.session.id })).length, 2);
      assert.deepEqual(
        stored.map((e) => e.metadata.client_id).sort(),
        first.events.map((e: Json) => e.id).sort(),
      );
    } finally {
      await context.close();
    }
  });

  test('a request whose answer was lost goes out by beacon with the same ids when the page is left', async () => {
    const context = await browser.newContext();
    let attempts = 0;
    let sentIds: string[] = [];
    await context.route(`${running.base}/track`, async (route) => {
      const request = route.request();
      attempts++;
      if (attempts === 1) {
        sentIds = (JSON.parse(request.postData() ?? '{}') as Json).events.map((e: Json) => e.id);
        await route.fetch();
        return route.abort('failed');
      }
      return route.continue();
    });
    await context.addInitScript(`(() => {
      const send = navigator.sendBeacon.bind(navigator);
      navigator.sendBeacon = (url, data) => {
        localStorage.setItem('beacon-ids', JSON.parse(data).events.map((e) => e.id).join(','));
        return send(url, data);
      };
    })()`);
    try {
      site.pages.set('/away', '<!doctype html><title>Away</title><p>no tracker here</p>');
      const page = await context.newPage();
      await page.goto(shopPage('/beacon-retry', { head: "<script>tracker.track('beacon-retry')</script>" }));
      await eventually('the first attempt', () => attempts >= 1);
      // Leave during the back-off: the waiting payload goes out by beacon.
      await page.goto(`${site.origin}/away`);
      const session = await eventually('the beacon', async () => {
        const found = await storedEvents(running, { type: 'beacon-retry' });
        return found.length > 0 && found[0]!.session.id;
      });
      await sleep(1500);
      const stored = await storedEvents(running, { session_id: session as string });
      const beaconIds = String(await page.evaluate("localStorage.getItem('beacon-ids')")).split(',');
      assert.deepEqual(beaconIds, sentIds, 'the beacon carried the same ids');
      assert.equal(stored.length, sentIds.length, 'each event once');
      assert.deepEqual(stored.map((e) => e.metadata.client_id).sort(), [...sentIds].sort());
    } finally {
      await context.close();
    }
  });

  test('Do Not Track is honoured when the script tag asks for it, and only then', async () => {
    const dnt = await browser.newContext();
    await dnt.addInitScript("Object.defineProperty(Navigator.prototype, 'doNotTrack', { get: () => '1' })");
    const dntBodies = trackBodies(dnt);
    const plain = await browser.newContext();
    const plainBodies = trackBodies(plain);
    try {
      const respecting = shopPage('/dnt', { attrs: { 'data-dnt': 'respect' } });
      const ignoring = shopPage('/no-dnt');
      const a = await dnt.newPage();
      await a.goto(respecting);
      const b = await dnt.newPage();
      await b.goto(ignoring);
      const c = await plain.newPage();
      await c.goto(respecting);
      await a.evaluate("tracker.track('click')");
      await eventually(
        'the pages that track to send',
        () => dntBodies.length === 1 && plainBodies.length === 1,
      );
      await sleep(800);
      assert.deepEqual(
        dntBodies.map((body) => body.context.page.path),
        ['/no-dnt'],
        'a visitor sending DNT is tracked only where data-dnt is not set',
      );
      assert.deepEqual(
        plainBodies.map((body) => body.context.page.path),
        ['/dnt'],
      );
      assert.deepEqual(
        (await dnt.cookies(site.origin)).filter((cookie) => cookie.name === 'ec_sid').length,
        1,
        'only the page that tracks sets the session cookie',
      );
    } finally {
      await Promise.all([dnt.close(), plain.close()]);
    }
  });
});

describe('web console', () => {
  let admin: BrowserContext;
  let consolePage: Page;
  let visitor: BrowserContext;
  let demo: Page;
  const pageErrors: string[] = [];
  let profileId = '';

  before(async () => {
    running = await listen();
    admin = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    consolePage = await admin.newPage();
    consolePage.on('console', (message) => {
      if (message.type() === 'error') pageErrors.push(message.text());
    });
    consolePage.on('pageerror', (error) => pageErrors.push(error.message));
    visitor = await browser.newContext({ viewport: { width: 1024, height: 640 } });
  });

  after(async () => {
    await admin?.close();
    await visitor?.close();
    await running?.service.close();
  });

  const go = async (route: string) => {
    await consolePage.click(`nav a[data-route="${route}"]`);
    await consolePage.waitForSelector(`main[data-view="${route}"]`);
  };

  test('sign in with the token, create the demo source, and watch the demo page events arrive live', async () => {
    await consolePage.goto(`${running.base}/console`);
    assert.equal(new URL(consolePage.url()).pathname, '/console/');
    await consolePage.fill('#token', 'wrong-token');
    await consolePage.click('#signin-submit');
    await consolePage.waitForSelector('#signin-error:text("not valid")');
    await consolePage.fill('#token', TOKEN);
    await consolePage.click('#signin-submit');
    await consolePage.waitForSelector('main[data-view="events"]');
    assert.equal(
      await consolePage.evaluate('sessionStorage.length'),
      1,
      'the token is kept in sessionStorage',
    );

    await go('sources');
    await consolePage.fill('#source-id', 'demo');
    await consolePage.fill('#source-name', 'Demo page');
    await consolePage.fill('#source-description', 'The collector’s own demo page');
    await consolePage.click('#source-create');
    await consolePage.waitForSelector('#sources tr[data-id="demo"] .badge.on');
    assert.equal((await read(running, '/event-source/demo')).name, 'Demo page');
    await consolePage.screenshot({ path: artifact('console-sources.png') });

    // A visitor on the demo page.
    demo = await visitor.newPage();
    const first = demo.waitForResponse(isTrack);
    await demo.goto(`${running.base}/demo`);
    assert.equal((await first).status(), 200);
    for (const button of ['#click', '#add-to-cart', '#click']) {
      const sent = demo.waitForResponse(isTrack);
      await demo.click(button);
      assert.equal((await sent).status(), 200);
    }
    profileId = String(await demo.evaluate("localStorage.getItem('ec_pid')"));
    await demo.screenshot({ path: artifact('demo.png') });

    await go('events');
    for (const type of ['page-view', 'demo-click', 'add-to-cart']) {
      await consolePage.waitForSelector(`#live-events tr[data-type="${type}"]`, { timeout: 10_000 });
    }
    assert.equal(await consolePage.locator('#live-events tr[data-type]').count(), 4);
    // The tracker sends each event's device time: shown with its source.
    assert.equal(await consolePage.locator('#live-events td.happened[data-source="device"]').count(), 4);
    const link = consolePage.locator('#live-events tr[data-type="add-to-cart"] a');
    assert.equal(await link.getAttribute('href'), `#/profile/${profileId}`);

    // The chart reads the counts of GET /events/stats, never a large page of events.
    const counted = consolePage.waitForResponse((r) => new URL(r.url()).pathname === '/events/stats', {
      timeout: 15_000,
    });
    const listed: string[] = [];
    consolePage.on('request', (r) => {
      if (new URL(r.url()).pathname === '/events') listed.push(r.url());
    });

    // Live: an event sent now shows up without reloading the console.
    const sent = demo.waitForResponse(isTrack);
    await demo.click('#add-to-cart');
    await sent;
    // (Waiting in the page with a string function would be refused by the console's CSP: no eval.)
    await consolePage.locator('#live-events tr[data-type="add-to-cart"]').nth(1).waitFor({ timeout: 10_000 });
    await consolePage.locator('#chart-status', { hasText: 'in the last 30 minutes' }).waitFor();
    const stats = await (await counted).json();
    assert.equal(stats.types.length > 0, true, JSON.stringify(stats));
    for (const url of listed) assert.equal(new URL(url).searchParams.get('limit'), '50', url);
    await consolePage.screenshot({ path: artifact('console-live.png') });

    // Disable and enable the source from the console.
    await go('sources');
    await consolePage.click('#sources tr[data-id="demo"] button.toggle');
    await consolePage.waitForSelector('#sources tr[data-id="demo"] .badge.off');
    assert.equal((await read(running, '/event-source/demo')).enabled, false);
    await consolePage.click('#sources tr[data-id="demo"] button.toggle');
    await consolePage.waitForSelector('#sources tr[data-id="demo"] .badge.on');
    assert.equal((await read(running, '/event-source/demo')).enabled, true);
  });

  test('a second page load keeps the profile (localStorage) and the session (cookie)', async () => {
    const bodies = trackBodies(visitor);
    const [cookie] = (await visitor.cookies(running.base)).filter((c) => c.name === 'ec_sid');
    assert.ok(cookie && profileId);

    let answer = demo.waitForResponse(isTrack);
    await demo.reload();
    assert.equal((await (await answer).json()).profile.id, profileId);
    assert.deepEqual(bodies[0]!.profile, { id: profileId });
    assert.equal(bodies[0]!.session.id, cookie.value, 'same visit');
    assert.equal((await read(running, `/profile/${profileId}`)).stats.visits, 1);

    // Thirty idle minutes later the cookie is gone: a new visit of the same profile.
    await visitor.clearCookies();
    answer = demo.waitForResponse(isTrack);
    await demo.reload();
    assert.equal((await (await answer).json()).profile.id, profileId);
    assert.deepEqual(bodies[1]!.profile, { id: profileId });
    assert.notEqual(bodies[1]!.session.id, cookie.value, 'a new session');
    assert.equal((await read(running, `/profile/${profileId}`)).stats.visits, 2);

    // The console's profile page shows both visits.
    await consolePage.goto(`${running.base}/console/#/profile/${profileId}`);
    await consolePage.waitForSelector('#profile-summary-id');
    assert.equal(await consolePage.textContent('#profile-summary-id'), profileId);
    assert.equal(await consolePage.textContent('#profile-visits'), '2');
    assert.equal(await consolePage.locator('#profile-sessions tbody tr').count(), 2);
    // What each session's first request said of the device (headless Chromium reads as a bot).
    const firstSession = consolePage.locator('#profile-sessions tbody tr').first();
    assert.equal(await firstSession.locator('td.device').textContent(), 'bot');
    assert.match(String(await firstSession.locator('td.os').textContent()), /^Linux/);
    assert.match(String(await firstSession.locator('td.app').textContent()), /Chrome/);
    assert.equal(await firstSession.locator('td.country').textContent(), '—');
    assert.equal(await consolePage.locator('#profile-timeline li').count(), 7);
    await consolePage.screenshot({ path: artifact('console-profile.png'), fullPage: true });
  });

  test('a schema created in the console rejects a bad event, which waits in the quarantine and replays once the schema is fixed', async () => {
    await go('schemas');
    await consolePage.click('#schema-new');
    // Live errors while typing.
    await consolePage.fill('#schema-json', '{"event_type": "purchase",');
    await consolePage.waitForSelector('#schema-errors li:text("JSON")');
    assert.equal(await consolePage.isDisabled('#schema-save'), true);
    await consolePage.fill(
      '#schema-json',
      JSON.stringify({
        event_type: 'purchase',
        validation: { json_schema: { properties: { type: 'object' } } },
      }),
    );
    await consolePage.waitForSelector('#schema-errors li:text("must be <event|session|profile>@")');
    const schema = (price: Json) =>
      JSON.stringify(
        {
          event_type: 'purchase',
          name: 'Purchase',
          validation: {
            enabled: true,
            json_schema: {
              'event@properties': { type: 'object', properties: { price }, required: ['price'] },
            },
          },
        },
        null,
        2,
      );
    await consolePage.fill('#schema-json', schema({ type: 'number' }));
    await consolePage.waitForSelector('#schema-errors li.ok');
    await consolePage.click('#schema-save');
    await consolePage.waitForSelector('#schemas tr[data-type="purchase"] .badge.on');
    assert.equal((await read(running, '/event/management/purchase')).validation.enabled, true);
    await consolePage.screenshot({ path: artifact('console-schemas.png') });

    // The visitor buys: a good price passes, a bad one is refused with 406.
    let sent = demo.waitForResponse(isTrack);
    await demo.click('#purchase');
    assert.equal((await sent).status(), 200);
    sent = demo.waitForResponse(isTrack);
    await demo.click('#bad-purchase');
    const refused = await sent;
    assert.equal(refused.status(), 406);
    assert.match((await refused.json()).detail, /\/price must be number/);

    await go('rejected');
    const row = consolePage.locator('#rejected tbody tr[data-id]');
    await row.first().waitFor();
    assert.equal(await row.count(), 1);
    assert.match(String(await row.textContent()), /event@properties: \/price must be number/);
    await consolePage.screenshot({ path: artifact('console-quarantine.png') });

    // Replaying before the fix: still refused, and kept.
    await consolePage.click('#rejected button.replay');
    await consolePage.waitForSelector('#flash.error:text("Still refused")');
    assert.equal(await row.count(), 1);

    // Fix the schema in the console: prices may also be strings.
    await go('schemas');
    await consolePage.click('#schemas tr[data-type="purchase"] button.edit');
    await consolePage.waitForSelector('#schema-editor-title:text("Edit purchase")');
    await consolePage.fill('#schema-json', schema({ type: ['number', 'string'] }));
    await consolePage.click('#schema-save');
    await consolePage.waitForSelector('#flash.ok:text("saved")');

    await go('rejected');
    await row.first().waitFor();
    await consolePage.click('#rejected button.replay');
    await consolePage.waitForSelector('#flash.ok:text("Replayed")');
    await consolePage.waitForSelector('#rejected td:text("The quarantine is empty.")');
    const purchases = await storedEvents(running, { type: 'purchase' });
    assert.deepEqual(purchases.map((e) => e.properties.price).sort(), [13.45, 'thirteen'].sort());

    // Disable, then delete the schema.
    await go('schemas');
    await consolePage.click('#schemas tr[data-type="purchase"] button.toggle');
    await consolePage.waitForSelector('#schemas tr[data-type="purchase"] .badge.off');
    assert.equal((await read(running, '/event/management/purchase')).validation.enabled, false);
    consolePage.once('dialog', (dialog) => void dialog.accept());
    await consolePage.click('#schemas tr[data-type="purchase"] button.delete');
    await consolePage.waitForSelector('#schemas td:text("No validation schemas yet.")');
    assert.equal((await running.service.get('/event/management/purchase')).statusCode, 404);
  });

  test('profile rules made in the console shape the demo visitor, and the profile page follows live', async () => {
    await go('rules');
    await consolePage.click('#rule-new');
    // Checked before saving: a path outside the profile's data is refused, and Save is disabled.
    await consolePage.fill(
      '#rule-json',
      JSON.stringify({
        event_type: 'add-to-cart',
        operations: [{ op: 'set', path: 'stats.visits', value: 1 }],
      }),
    );
    await consolePage.waitForSelector('#rule-errors li:text("must be a dotted path under traits.public")');
    assert.equal(await consolePage.isDisabled('#rule-save'), true);
    const save = async (rule: Json) => {
      await consolePage.click('#rule-new');
      await consolePage.fill('#rule-json', JSON.stringify(rule, null, 2));
      await consolePage.waitForSelector('#rule-errors li.ok');
      await consolePage.click('#rule-save');
      await consolePage.waitForSelector(`#rules tr[data-id="${rule.id}"] .badge.on`);
    };
    await save({
      id: 'cart',
      name: 'Cart',
      event_type: 'add-to-cart',
      operations: [
        { op: 'set', path: 'traits.public.last_sku', from: 'properties.sku' },
        { op: 'increment', path: 'traits.public.cart_value', from: 'properties.price' },
        { op: 'add_segment', value: 'shoppers' },
      ],
    });
    await save({
      id: 'signup',
      name: 'Sign-up',
      event_type: 'sign-up',
      operations: [
        { op: 'identify', type: 'email', from: 'properties.email' },
        { op: 'set', path: 'traits.private.email', from: 'properties.email' },
        { op: 'set', path: 'traits.public.plan', from: 'properties.plan' },
      ],
    });
    assert.equal((await read(running, '/profile-rule/cart')).operations.length, 3);
    await consolePage.screenshot({ path: artifact('console-rules.png') });
    // Disabled, then enabled again, from the list.
    await consolePage.click('#rules tr[data-id="cart"] button.toggle');
    await consolePage.waitForSelector('#rules tr[data-id="cart"] .badge.off');
    assert.equal((await read(running, '/profile-rule/cart')).enabled, false);
    await consolePage.click('#rules tr[data-id="cart"] button.toggle');
    await consolePage.waitForSelector('#rules tr[data-id="cart"] .badge.on');

    // The visitor's profile page is open while the demo page sends events: it follows them.
    await consolePage.goto(`${running.base}/console/#/profile/${profileId}`);
    await consolePage.waitForSelector('#profile-summary-id');
    assert.equal(await consolePage.locator('#profile-segments [data-segment]').count(), 0);
    for (const button of ['#add-to-cart', '#sign-up']) {
      const sent = demo.waitForResponse(isTrack);
      await demo.click(button);
      assert.equal((await sent).status(), 200);
    }
    await consolePage.locator('#profile-segments [data-segment="shoppers"]').waitFor({ timeout: 10_000 });
    await consolePage.locator('#profile-traits-public', { hasText: 'SKU-42' }).waitFor({ timeout: 10_000 });
    await consolePage
      .locator('#profile-ids li[data-type="email"]', { hasText: 'demo.visitor@example.com' })
      .waitFor();
    await consolePage.locator('#profile-traits-private', { hasText: 'Demo.Visitor@example.com' }).waitFor();
    const stored = await read(running, `/profile/${profileId}`);
    assert.equal(stored.traits.public.last_sku, 'SKU-42');
    assert.equal(stored.traits.public.cart_value, 13.45);
    assert.deepEqual(stored.segments, ['shoppers']);
    assert.deepEqual(stored.ids, [{ type: 'email', value: 'demo.visitor@example.com' }]);
    await consolePage.screenshot({ path: artifact('console-profile-rules.png'), fullPage: true });
  });

  test('the console runs under its Content Security Policy without errors', () => {
    assert.deepEqual(
      pageErrors.filter((text) => !/status of 40[16]/.test(text)),
      [],
      'errors in the console page (besides the refused wrong token and replay)',
    );
  });
});

describe('console and demo page details', () => {
  let admin: BrowserContext;
  let page: Page;
  const pageErrors: string[] = [];

  before(async () => {
    running = await listen();
    await running.service.createSource({ id: 'web' });
    admin = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    page = await admin.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(`${running.base}/console/`);
    await page.fill('#token', TOKEN);
    await page.click('#signin-submit');
    await page.waitForSelector('main[data-view="events"]');
  });

  after(async () => {
    await admin?.close();
    await running?.service.close();
  });

  const track = async (body: Json) => {
    const res = await running.service.post('/track', body);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Json;
  };
  const view = async (hash: string, name: string) => {
    await page.goto(`${running.base}/console/#/${hash}`);
    await page.reload();
    await page.waitForSelector(`main[data-view="${name}"]`);
  };

  test('profiles made close in time show distinct short ids in the live events', async () => {
    const a = await track({
      source: { id: 'web' },
      session: { id: 'short-a' },
      events: [{ type: 'short-id' }],
    });
    const b = await track({
      source: { id: 'web' },
      session: { id: 'short-b' },
      events: [{ type: 'short-id' }],
    });
    const ids = [a.profile.id as string, b.profile.id as string];
    assert.equal(ids[0]!.slice(0, 8), ids[1]!.slice(0, 8), 'time-ordered ids share their start');
    await view('events', 'events');
    const links = page.locator('#live-events tr[data-type="short-id"] td.profile a');
    await links.nth(1).waitFor();
    const shown = await links.allTextContents();
    assert.equal(shown.length, 2);
    assert.notEqual(shown[0], shown[1], `shown: ${shown.join(' and ')}`);
    for (const [i, text] of shown.entries()) {
      const id = await links.nth(i).getAttribute('title');
      assert.ok(id && text.endsWith(id.slice(-8).replace(/^…/, '')), `${text} for ${id}`);
    }
  });

  test("a session's last activity is its latest request, even one that changed nothing of it", async () => {
    const context = { page: { url: 'https://shop.example/' } };
    const first = await track({
      source: { id: 'web' },
      session: { id: 'activity' },
      context,
      events: [{ type: 'view' }],
    });
    await sleep(1100); // the console shows times to the second
    await track({ source: { id: 'web' }, session: { id: 'activity' }, context, events: [{ type: 'view' }] });
    const session = await read(running, '/session/activity');
    assert.notEqual(session.metadata.time.update, session.metadata.time.insert);
    await view(`profile/${first.profile.id}`, 'profile');
    const cells = page.locator('#profile-sessions tr[data-id="activity"] td');
    await cells.first().waitFor();
    const expected = await page.evaluate(
      ([insert, update]) => [new Date(insert!).toLocaleString(), new Date(update!).toLocaleString()],
      [session.metadata.time.insert as string, session.metadata.time.update as string],
    );
    assert.deepEqual([await cells.nth(1).textContent(), await cells.nth(2).textContent()], expected);
    assert.notEqual(expected[0], expected[1]);
  });

  test('a replay refused again shows its new reasons, and still does after a reload', async () => {
    const schema = (rule: Json) =>
      running.service.manage('POST', '/event/management', {
        event_type: 'order',
        validation: { enabled: true, json_schema: { 'event@properties': rule } },
      });
    assert.equal(
      (await schema({ type: 'object', properties: { price: { type: 'number' } } })).statusCode,
      200,
    );
    const refused = await running.service.post('/track', {
      source: { id: 'web' },
      session: { id: 'replayed' },
      events: [{ type: 'order', properties: { price: 'ten' } }],
    });
    assert.equal(refused.statusCode, 406);
    await view('rejected', 'rejected');
    const reasons = page.locator('#rejected tr[data-id] .reasons');
    await reasons.first().waitFor();
    assert.match(String(await reasons.first().textContent()), /\/price must be number/);

    // The schema changes; the replay is refused for another reason.
    assert.equal((await schema({ type: 'object', required: ['currency'] })).statusCode, 200);
    await page.click('#rejected button.replay');
    await page.waitForSelector('#flash.error:text("Still refused")');
    await page.waitForSelector('#rejected .reasons:has-text("currency")');
    assert.doesNotMatch(String(await reasons.first().textContent()), /price/);
    await page.reload();
    await page.waitForSelector('#rejected .reasons:has-text("currency")');
    assert.doesNotMatch(String(await reasons.first().textContent()), /price/);
    const [stored] = (await read(running, '/event/rejected')).result as Json[];
    assert.match(stored!.errors[0].reason, /currency/);
  });

  test('"New schema" starts from an event type that has none, and never replaces one without asking', async () => {
    await view('schemas', 'schemas');
    await page.waitForSelector('#schemas tr[data-type="order"]');
    await page.click('#schema-new');
    const started = JSON.parse(await page.inputValue('#schema-json')) as Json;
    const existing = ((await read(running, '/event/management')).result as Json[]).map((r) => r.event_type);
    assert.ok(!existing.includes(started.event_type), `${started.event_type} is new`);

    // The same record under an existing type: a question first; "no" keeps the stored schema.
    const before = await read(running, '/event/management/order');
    await page.fill('#schema-json', JSON.stringify({ ...started, event_type: 'order' }, null, 2));
    await page.waitForSelector('#schema-errors li.ok');
    const dialogs: string[] = [];
    page.once('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await page.click('#schema-save');
    await page.waitForSelector('#flash.error:text("Not saved")');
    assert.match(dialogs[0] ?? '', /order already has a schema/);
    assert.deepEqual(await read(running, '/event/management/order'), before);

    // "Yes" replaces it.
    page.once('dialog', (dialog) => void dialog.accept());
    await page.click('#schema-save');
    await page.waitForSelector('#flash.ok:text("saved")');
    assert.equal((await read(running, '/event/management/order')).description, started.description);
  });

  test('at 420 px wide the navigation stays inside the header and the page does not scroll sideways', async () => {
    const narrow = await browser.newContext({ viewport: { width: 420, height: 800 } });
    try {
      const phone = await narrow.newPage();
      await phone.goto(`${running.base}/console/`);
      await phone.fill('#token', TOKEN);
      await phone.click('#signin-submit');
      for (const route of ['events', 'sources', 'schemas', 'rejected', 'profile']) {
        await phone.goto(`${running.base}/console/#/${route}`);
        await phone.waitForSelector(`main[data-view="${route}"]`);
        // The layout as it settles once the view has rendered: measured again for up to 2 s (a view
        // filling in can move the header for a frame on a loaded machine), then it must hold.
        const misplaced = async (): Promise<string | null> => {
          const header = (await phone.locator('header').boundingBox())!;
          for (const link of await phone.locator('nav a').all()) {
            const box = (await link.boundingBox())!;
            const name = await link.textContent();
            if (box.x < 0 || box.x + box.width > 420) return `${route}: ${name} is off the screen`;
            if (box.y < header.y || box.y + box.height > header.y + header.height) {
              return `${route}: ${name} is off the header`;
            }
          }
          const width = await phone.evaluate(() => document.documentElement.scrollWidth);
          return width <= 420 ? null : `${route}: the page is ${width} px wide`;
        };
        let problem = await misplaced();
        for (const started = Date.now(); problem !== null && Date.now() - started < 2000;) {
          await phone.waitForTimeout(100);
          problem = await misplaced();
        }
        assert.equal(problem, null);
      }
      await phone.screenshot({ path: artifact('console-420px.png') });
    } finally {
      await narrow.close();
    }
  });

  test('the demo page lists what the service answered: refused on 401, sent on 200', async () => {
    const visitor = await browser.newContext();
    try {
      const demo = await visitor.newPage();
      await demo.goto(`${running.base}/demo?source=no-such-source`);
      await demo.waitForSelector('#log li');
      await demo.click('#click');
      await demo.locator('#log li').nth(1).waitFor();
      const refused = await demo.locator('#log li').allTextContents();
      assert.ok(
        refused.every((line) => /refused \(401: Invalid event source `no-such-source`\)/.test(line)),
        refused.join('\n'),
      );
      assert.ok(!refused.some((line) => /: sent$/.test(line)));

      await demo.goto(`${running.base}/demo?source=web`);
      await demo.waitForSelector('#log li');
      assert.match(String(await demo.locator('#log li').first().textContent()), /page-view: sent$/);
      await demo.screenshot({ path: artifact('demo-refused-and-sent.png') });
    } finally {
      await visitor.close();
    }
  });

  test('no page error in the console', () => {
    assert.deepEqual(pageErrors, []);
  });
});
