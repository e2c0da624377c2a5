import { RateLimited } from './errors.js';
import type { EventSource } from '../model/records.js';

/**
 * Requests per second per event source, in this process (off by default). A source's own
 * `rate_limit` wins over the global TRACK_RATE_LIMIT; past the limit the request is RateLimited.
 * Fixed one-second windows: the cheapest counter that bounds a burst to twice the limit.
 */
export class SourceRateLimiter {
  private readonly windows = new Map<string, { second: number; count: number }>();

  constructor(
    private readonly defaultPerSecond: number,
    private readonly now: () => number = Date.now,
  ) {}

  check(source: EventSource): void {
    const limit = source.rate_limit ?? this.defaultPerSecond;
    if (!limit) return;
    const second = Math.floor(this.now() / 1000);
    let window = this.windows.get(source.id);
    if (!window || window.second !== second) {
      window = { second, count: 0 };
      this.windows.set(source.id, window);
    }
    if (++window.count > limit) throw new RateLimited(source.id, limit);
  }
}
