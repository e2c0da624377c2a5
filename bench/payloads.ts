/**
 * Tracker payloads for the benchmark. Each builder returns a function producing one request body:
 * a first visit (a fresh session id and no profile, like a new browser) or a returning visit (a
 * known session and its profile). Bodies are assembled from pre-serialised parts so the load
 * generator spends little CPU on them.
 */
import { randomUUID } from 'node:crypto';
import { timeOrderedId } from '../src/domain/ids.js';

/** The desktop Chrome of the payloads' browser context, for the `User-Agent` header. */
export const CHROME_USER_AGENT =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36';

/** Browser context modelled on test/fixtures/tracker/tracker-first-visit.json. */
const context = {
  time: { local: '11/22/2026, 4:11:37 AM', tz: 'UTC' },
  browser: {
    local: {
      browser: {
        name: 'chrome',
        engine: 'Gecko',
        appVersion:
          '5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36',
        userAgent: CHROME_USER_AGENT,
        language: 'en-US',
        onLine: true,
        javaEnabled: false,
        cookieEnabled: true,
      },
      device: { platform: 'Linux x86_64' },
    },
  },
  screen: {
    local: {
      width: 1920,
      height: 1080,
      innerWidth: 1903,
      innerHeight: 947,
      availWidth: 1920,
      availHeight: 1050,
      colorDepth: 24,
      pixelDepth: 24,
      orientation: 'landscape-primary',
    },
  },
};

/** A copy of the browser context of the payloads. */
export function browserContext(): typeof context {
  return structuredClone(context);
}

const PAGES = [
  '/',
  '/products',
  '/products/42',
  '/products/77',
  '/cart',
  '/checkout',
  '/blog/launch',
  '/about',
];

function pageView(path: string) {
  return {
    type: 'page-view',
    properties: { path },
    options: {},
    context: {
      page: {
        url: `https://shop.example.com${path}`,
        path,
        hash: '',
        title: `Shop ${path}`,
        referer: { host: null, query: null },
        history: { length: 2 },
      },
    },
  };
}

/** Splits a body around its session id, so that a request is `head + id + tail`. */
function template(body: object): { head: string; tail: string } {
  const marker = '__SESSION_ID__';
  const text = JSON.stringify({ ...body, session: { id: marker } });
  const at = text.indexOf(marker);
  return { head: text.slice(0, at), tail: text.slice(at + marker.length) };
}

/**
 * One page-view event with the tracker's page, browser and screen context (options left at their
 * defaults, so the service answers the same small response as the bare server). Session ids are
 * random UUIDs, as trackers make them, unless `sessionId` makes them otherwise.
 */
export function oneEvent(sourceId: string, sessionId: () => string = randomUUID): () => string {
  const parts = PAGES.map((path) =>
    template({ source: { id: sourceId }, context, profile: null, session: null, events: [pageView(path)] }),
  );
  let n = 0;
  return () => {
    const part = parts[n++ % parts.length]!;
    return part.head + sessionId() + part.tail;
  };
}

/**
 * Client event ids: `ordered` as the browser tracker makes them (UUID version 7, sorted by time),
 * `random` as many other clients do (version 4), or none.
 */
export type ClientIds = 'ordered' | 'random' | 'none';

const clientId = (ids: ClientIds) =>
  ids === 'none' ? '' : `"id":"${ids === 'ordered' ? timeOrderedId() : randomUUID()}",`;

/**
 * The first visit of `oneEvent` with what the browser tracker adds to every event: a client event id
 * (a UUID version 7, or see ClientIds) and the `timestamp` it was queued at, and `sent_at`.
 */
export function oneTrackedEvent(sourceId: string, ids: ClientIds = 'ordered'): () => string {
  const body = oneEvent(sourceId);
  return () => {
    const now = new Date().toISOString();
    return body().replace(
      '"events":[{',
      `"sent_at":"${now}","events":[{${clientId(ids)}"timestamp":"${now}",`,
    );
  };
}

/** `count` small events in one request: the shape of Tracardi's own load test. */
export function manyEvents(sourceId: string, count: number): () => string {
  const types = ['page-view', 'product-view', 'add-to-cart', 'scroll'];
  const events = Array.from({ length: count }, (_, i) => ({
    type: types[i % types.length]!,
    properties: { path: PAGES[i % PAGES.length]!, position: i, price: (i % 50) + 0.99, sku: `sku-${i}` },
  }));
  const part = template({ source: { id: sourceId }, profile: null, session: null, events });
  return () => part.head + randomUUID() + part.tail;
}

/** A session the service knows, with the profile it answered for it. */
export interface Visitor {
  sessionId: string;
  profileId: string;
}

/**
 * A returning visit of a random visitor: its session and profile ids, the browser context, the
 * time the tracker sent it (`sent_at`) and one page-view with a client event id (see ClientIds) and a
 * `timestamp`, both times now.
 */
export function returningVisit(
  sourceId: string,
  visitors: Visitor[],
  clientIds: ClientIds = 'ordered',
): () => string {
  if (visitors.length === 0) throw new Error('returningVisit needs at least one visitor');
  const source = JSON.stringify({ id: sourceId });
  const browser = JSON.stringify(context);
  // `{"source":…,"session":{"id":…},"profile":{"id":…},"context":…,"sent_at":"` for each visitor.
  const heads = visitors.map(
    (v) =>
      `{"source":${source},"session":{"id":${JSON.stringify(v.sessionId)}},` +
      `"profile":{"id":${JSON.stringify(v.profileId)}},"context":${browser},"sent_at":"`,
  );
  // `,"type":…}` of each page's event, after its id and timestamp.
  const events = PAGES.map((path) => `,${JSON.stringify(pageView(path)).slice(1)}`);
  let n = 0;
  return () => {
    const now = new Date().toISOString();
    const head = heads[Math.floor(Math.random() * heads.length)]!;
    const event = events[n++ % events.length]!;
    return `${head}${now}","events":[{${clientId(clientIds)}"timestamp":"${now}"${event}]}`;
  };
}
