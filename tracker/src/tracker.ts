/**
 * The browser tracker served at GET /tracker.js, bundled into one dependency-free IIFE.
 *
 *   <script src="https://collector.example/tracker.js" data-source="SOURCE_ID" async></script>
 *
 * - `tracker.track(type, properties)` queues an event. Events of a page load are sent together in one
 *   POST /track once the page has loaded; later events are batched for BATCH_MS.
 * - The session id lives in a first-party cookie that expires after 30 minutes without activity (then
 *   the next event starts a new visit); the profile id lives in localStorage and is sent on later visits,
 *   replaced whenever the service answers with another one.
 * - On page hide, whatever is still queued goes out with navigator.sendBeacon.
 * - Every event gets an id when it is queued (kept across retries and the page-hide beacon, so the
 *   service stores it once however often it arrives) and its `timestamp`; each attempt carries
 *   `sent_at`, so that the service can correct a device clock that is off.
 * - A request is retried (with back-off) only on a network error or a 503; never on a 4xx.
 * - `data-dnt="respect"` turns the tracker off for visitors whose browser sends Do Not Track.
 * - `data-page-view="off"` stops the automatic `page-view` event of each page load.
 * - Once a request has its final answer, a `tracker:sent` event is dispatched on `window` with
 *   `detail: {status, types, detail}` (status 0: no answer; `detail`: the service's reason on an error).
 *
 * Calls made before the script has loaded can be queued with a one-line stub:
 *   <script>window.tracker = window.tracker || { q: [], track: function () { this.q.push(arguments); } };</script>
 */

type Properties = Record<string, unknown>;

interface PageInfo {
  url: string;
  path: string;
  title: string;
}

interface QueuedEvent {
  id: string;
  timestamp: string;
  type: string;
  properties: Properties;
  context: { page: PageInfo };
}

/** A request's payload without `sent_at`, which each attempt sets anew. */
type Payload = Record<string, unknown> & { events: QueuedEvent[] };

export interface Tracker {
  track(type: string, properties?: Properties): void;
  /** Sends what is queued now instead of waiting for the batch. */
  flush(): void;
}

interface Stub {
  q?: ArrayLike<unknown>[];
}

export const SESSION_COOKIE = 'ec_sid';
export const PROFILE_KEY = 'ec_pid';
const SESSION_IDLE_SEC = 30 * 60;
const BATCH_MS = 250;
const RETRIES = 3;
const RETRY_BASE_MS = 500;
const KEEPALIVE_MAX = 60_000;

const noop: Tracker = { track() {}, flush() {} };

/**
 * A UUID version 7: the time in milliseconds, then random bits. Ids made close in time sort
 * together, so the service's indexes of session and client event ids grow at their end instead of
 * being written all over (docs/api.md#duplicates).
 */
function newId(): string {
  // crypto.randomUUID needs a secure context; getRandomValues works on plain http pages too.
  const b = crypto.getRandomValues(new Uint8Array(16));
  for (let i = 5, t = Date.now(); i >= 0; i--, t = Math.floor(t / 256)) b[i] = t % 256;
  b[6] = (b[6]! & 0x0f) | 0x70;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = Array.from(b, (x) => (x + 0x100).toString(16).slice(1)).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function storage(): Storage | null {
  try {
    return localStorage;
  } catch {
    return null; // storage disabled (sandboxed frame, privacy settings)
  }
}

export function createTracker(script: HTMLScriptElement | null): Tracker {
  const source = script?.dataset.source;
  if (!script || !source) {
    console.warn('tracker.js: add data-source="<event source id>" to its <script> tag');
    return noop;
  }
  const nav = navigator as Navigator & { doNotTrack?: string | null };
  const dnt = nav.doNotTrack ?? (window as Window & { doNotTrack?: string }).doNotTrack;
  if (script.dataset.dnt === 'respect' && (dnt === '1' || dnt === 'yes')) return noop;

  const endpoint = new URL('track', script.src).href;
  const secure = location.protocol === 'https:' ? '; secure' : '';
  let profileId: string | null = null;
  try {
    profileId = storage()?.getItem(PROFILE_KEY) ?? null;
  } catch {
    profileId = null;
  }
  let queue: QueuedEvent[] = [];
  let loaded = false;
  let sending = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  /** The payload of a request waiting for its retry: sent by beacon if the page goes away meanwhile. */
  let retrying: Payload | null = null;

  /** The session id of the cookie, or a new one (a new visit); either way its idle time restarts. */
  function session(): string {
    const match = /(?:^|;\s*)ec_sid=([^;]+)/.exec(document.cookie);
    const id = match ? decodeURIComponent(match[1]!) : newId();
    document.cookie = `${SESSION_COOKIE}=${encodeURIComponent(id)}; max-age=${SESSION_IDLE_SEC}; path=/; samesite=lax${secure}`;
    return id;
  }

  function page(): PageInfo {
    return { url: location.href, path: location.pathname, title: document.title };
  }

  function payloadOf(events: QueuedEvent[]): Payload {
    return {
      source: { id: source },
      session: { id: session() },
      ...(profileId ? { profile: { id: profileId } } : {}),
      context: {
        page: { ...page(), referrer: document.referrer },
        browser: { language: navigator.language },
        screen: { width: screen.width, height: screen.height },
      },
      events,
    };
  }

  /** The text of one attempt: the payload with the time it is sent. */
  function body(payload: Payload): string {
    return JSON.stringify({ ...payload, sent_at: new Date().toISOString() });
  }

  function remember(answer: unknown): void {
    const id = (answer as { profile?: { id?: unknown } } | null)?.profile?.id;
    if (typeof id !== 'string' || !id || id === profileId) return;
    profileId = id;
    try {
      storage()?.setItem(PROFILE_KEY, id);
    } catch {
      // full or disabled storage: the id is kept for this page only
    }
  }

  const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  async function send(): Promise<void> {
    timer = undefined;
    if (sending || queue.length === 0) return;
    const types = queue.map((e) => e.type);
    const payload = payloadOf(queue);
    queue = [];
    sending = true;
    for (let attempt = 0; ; attempt++) {
      let status: number; // 0: network error
      let detail: unknown;
      try {
        const text = body(payload);
        const response = await fetch(endpoint, {
          method: 'POST',
          body: text, // text/plain: a simple CORS request, no preflight
          keepalive: text.length < KEEPALIVE_MAX,
        });
        status = response.status;
        const answer = (await response.json().catch(() => null)) as { detail?: unknown } | null;
        if (response.ok) remember(answer);
        else detail = answer?.detail;
      } catch {
        status = 0;
      }
      if ((status !== 0 && status !== 503) || attempt >= RETRIES) {
        dispatchEvent(new CustomEvent('tracker:sent', { detail: { status, types, detail } }));
        break;
      }
      retrying = payload;
      await wait(RETRY_BASE_MS * 2 ** attempt);
      if (retrying === null) break; // the page went away and the beacon took it
      retrying = null;
    }
    sending = false;
    schedule();
  }

  function schedule(): void {
    if (loaded && !sending && timer === undefined && queue.length > 0) timer = setTimeout(send, BATCH_MS);
  }

  function leave(): void {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    const payloads = queue.length > 0 ? [payloadOf(queue)] : [];
    queue = [];
    if (retrying !== null) payloads.unshift(retrying);
    retrying = null;
    for (const payload of payloads) {
      const text = body(payload);
      if (!navigator.sendBeacon?.(endpoint, text)) {
        fetch(endpoint, { method: 'POST', body: text, keepalive: true }).catch(() => undefined);
      }
    }
  }

  function pageLoaded(): void {
    setTimeout(() => {
      loaded = true;
      void send();
    }, 0);
  }

  addEventListener('pagehide', leave);
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'hidden') leave();
  });
  if (document.readyState === 'complete') pageLoaded();
  else addEventListener('load', pageLoaded);

  const tracker: Tracker = {
    track(type, properties = {}) {
      if (typeof type !== 'string' || type === '') return;
      queue.push({
        id: newId(),
        timestamp: new Date().toISOString(),
        type,
        properties,
        context: { page: page() },
      });
      schedule();
    },
    flush() {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      if (loaded) void send();
    },
  };
  if (script.dataset.pageView !== 'off') tracker.track('page-view');
  return tracker;
}

/** Replaces the stub (if any) with the tracker and replays the calls it queued. */
export function install(): void {
  const w = window as Window & { tracker?: Tracker & Stub };
  const stub = w.tracker;
  const script = (document.currentScript ??
    document.querySelector('script[src*="tracker.js"][data-source]')) as HTMLScriptElement | null;
  const tracker = createTracker(script);
  w.tracker = tracker;
  for (const args of Array.from(stub?.q ?? [])) {
    tracker.track(...(Array.from(args) as [string, Properties?]));
  }
}
