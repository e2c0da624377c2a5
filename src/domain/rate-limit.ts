import { RateLimited } from './errors.js';
import type { EventSource } from '../model/records.js';

/**
 * Counts per key in fixed one-second windows: the cheapest counter that bounds a burst to twice the
 * limit. All counts are dropped when the second changes, so memory holds one second's keys at most.
 */
export class SecondWindows {
  private second = -1;
  private counts = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Counts one more for `key` and answers how many it has this second. */
  hit(key: string): number {
    const second = Math.floor(this.now() / 1000);
    if (second !== this.second) {
      this.second = second;
      this.counts = new Map();
    }
    const count = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, count);
    return count;
  }
}

export interface RateLimits {
  /** Requests per second of each event source without its own `rate_limit`; 0 is unlimited. */
  perSource: number;
  /** Requests per second of each client address, whatever the source; 0 is unlimited. */
  perClient: number;
}

/**
 * Requests per second per event source and per client address, in this process (both off by
 * default; docs/api.md#rate-limits). A source's own `rate_limit` wins over the default; past a limit
 * the request is RateLimited.
 */
export class RateLimiter {
  private readonly sources: SecondWindows;
  private readonly clients: SecondWindows;

  constructor(
    private readonly limits: RateLimits,
    now: () => number = Date.now,
  ) {
    this.sources = new SecondWindows(now);
    this.clients = new SecondWindows(now);
  }

  /** Counts a request of a client address; checked before anything else of the request. */
  checkClient(client: string | null): void {
    const perClient = this.limits.perClient;
    if (perClient && client !== null && this.clients.hit(client) > perClient) {
      throw new RateLimited(`client address \`${client}\``, perClient);
    }
  }

  /** Counts a request of an event source. */
  checkSource(source: EventSource): void {
    const perSource = source.rate_limit ?? this.limits.perSource;
    if (perSource && this.sources.hit(source.id) > perSource) {
      throw new RateLimited(`source \`${source.id}\``, perSource);
    }
  }
}
