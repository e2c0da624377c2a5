/**
 * The stored-count check of `npm run bench`: every event the service acknowledged (2xx answers ×
 * events per request, over every request to it: legs, warm-ups, soak and scenario preparation) must
 * be readable through `GET /events` afterwards, per event source. Requests in flight when a leg
 * stopped (at most one per connection and leg) may be stored without having been acknowledged; more
 * than those would mean events stored twice, fewer than acknowledged a loss.
 */
import { fmt, round1, sum } from './numbers.js';
import { apiJson, type Child } from './processes.js';

interface Entry {
  events: number;
  inFlight: number;
}

/** Per event source: the events acknowledged and the most that may be stored unacknowledged. */
export class Ledger {
  readonly bySource = new Map<string, Entry>();
  constructor(private readonly connections: number) {}

  private entry(sourceId: string): Entry {
    let entry = this.bySource.get(sourceId);
    if (!entry) this.bySource.set(sourceId, (entry = { events: 0, inFlight: 0 }));
    return entry;
  }

  /** A source whose stored events are to be counted, even if nothing is acknowledged. */
  open(sourceId: string): void {
    this.entry(sourceId);
  }

  /** A leg of `ok` acknowledged requests; one per connection may have been in flight at its end. */
  leg(sourceId: string, ok: number, eventsPerRequest: number): void {
    const entry = this.entry(sourceId);
    entry.events += ok * eventsPerRequest;
    entry.inFlight += this.connections * eventsPerRequest;
  }

  /** Events acknowledged by requests that were all answered (none in flight). */
  answered(sourceId: string, events: number): void {
    this.entry(sourceId).events += events;
  }
}

export interface SourceCount {
  sourceId: string;
  acknowledged: number;
  maxUnacknowledged: number;
  stored: number;
  pages: number;
  error?: string;
}

export interface StoredCheck {
  ok: boolean;
  acknowledged: number;
  stored: number;
  countSeconds: number;
  perSource: SourceCount[];
}

interface StoredEvent {
  id: string;
  metadata: { time: { insert: string } };
}

/** (insert time, id) of an event: the order of `GET /events` is descending on it. */
const position = (e: StoredEvent) => [e.metadata.time.insert, e.id] as const;
const before = (a: readonly [string, string], b: readonly [string, string]) =>
  a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);

/**
 * Counts the stored events of one source by paging GET /events (1000 per page) along `next`.
 * Checks that the pages go strictly down the (insert time, id) order, so that a cursor that does not
 * advance is reported instead of looping, and gives up after `maxPages`.
 */
async function countStored(
  service: Child,
  sourceId: string,
  maxPages: number,
): Promise<{ count: number; pages: number; error?: string }> {
  let count = 0;
  let pages = 0;
  let cursor: string | null = null;
  let last: readonly [string, string] | null = null;
  do {
    const query: string = `/events?source_id=${encodeURIComponent(sourceId)}&limit=1000${
      cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''
    }`;
    const page = await apiJson<{ result: StoredEvent[]; next: string | null }>(service, 'GET', query);
    pages++;
    for (const event of page.result) {
      const here = position(event);
      if (last && !before(here, last)) {
        return {
          count,
          pages,
          error:
            `GET /events paging is out of order on page ${pages}: ${here.join(' ')} ` +
            `comes after ${last.join(' ')} (a cursor that does not advance?)`,
        };
      }
      last = here;
      count++;
    }
    cursor = page.next;
    if (cursor && pages >= maxPages)
      return { count, pages, error: `GET /events still has a next page after ${pages} pages` };
  } while (cursor);
  return { count, pages };
}

/** Counts every source of the ledger through the service's read API and compares. */
export async function checkStored(service: Child, ledger: Ledger): Promise<StoredCheck> {
  const started = Date.now();
  const perSource: SourceCount[] = [];
  for (const [sourceId, acked] of ledger.bySource) {
    const maxPages = Math.ceil((acked.events + acked.inFlight) / 1000) * 2 + 10;
    const { count, pages, error } = await countStored(service, sourceId, maxPages);
    perSource.push({
      sourceId,
      acknowledged: acked.events,
      maxUnacknowledged: acked.inFlight,
      stored: count,
      pages,
      ...(error ? { error } : {}),
    });
  }
  return {
    ok: perSource.every(
      (p) => !p.error && p.stored >= p.acknowledged && p.stored - p.acknowledged <= p.maxUnacknowledged,
    ),
    acknowledged: sum(perSource.map((p) => p.acknowledged)),
    stored: sum(perSource.map((p) => p.stored)),
    countSeconds: round1((Date.now() - started) / 1000),
    perSource,
  };
}

/** The console lines of the check: one per source, then the verdict. */
export function printStoredCheck(check: StoredCheck): void {
  for (const p of check.perSource) {
    const diff = p.stored - p.acknowledged;
    const verdict = p.error
      ? `FAILED: ${p.error}`
      : diff < 0
        ? `MISSING ${fmt(-diff)}`
        : diff > p.maxUnacknowledged
          ? `${fmt(diff)} MORE than acknowledged: more than the requests in flight could explain (duplicates?)`
          : diff > 0
            ? `OK (+${fmt(diff)} from requests in flight when a leg stopped)`
            : 'OK';
    console.log(
      `stored ${p.sourceId}: ${fmt(p.acknowledged)} acknowledged, ${fmt(p.stored)} stored: ${verdict}`,
    );
  }
  console.log(
    `stored-count check: ${check.ok ? 'OK' : 'FAILED'} (${fmt(check.acknowledged)} acknowledged, ` +
      `${fmt(check.stored)} stored; counted in ${check.countSeconds} s)`,
  );
}
