import type { TimeSource } from '../model/records.js';
import { clockText, isoTime, MIN_TIME_MS, parseTime } from '../model/time.js';

/**
 * When the events of one request happened (docs/api.md#event-time). `receivedMs` is when the request
 * was received (for a replay from the quarantine, when it was first received); `sent_at` tells how
 * far the device's clock is off from ours.
 */
export class RequestClock {
  /** Device clock minus server clock, when they differ by more than the skew; else null. */
  private readonly offsetMs: number | null;

  constructor(
    readonly receivedMs: number,
    readonly received: string,
    sentAt: string | null | undefined,
    private readonly skewMs: number,
  ) {
    const sentMs = typeof sentAt === 'string' ? parseTime(sentAt) : null;
    const offset = sentMs === null ? 0 : sentMs - receivedMs;
    this.offsetMs = Math.abs(offset) > skewMs ? offset : null;
  }

  static at(received: Date, sentAt: string | null | undefined, skewSec: number): RequestClock {
    return new RequestClock(received.getTime(), clockText(received), sentAt, skewSec * 1000);
  }

  /** `metadata.time.create` and `source` of an event with this `timestamp` (or none). */
  eventTime(timestamp: string | null | undefined): { create: string; source: TimeSource } {
    const deviceMs = typeof timestamp === 'string' ? parseTime(timestamp) : null;
    if (deviceMs === null) return { create: this.received, source: 'server' };
    const source: TimeSource = this.offsetMs === null ? 'device' : 'corrected';
    const createMs = this.offsetMs === null ? deviceMs : deviceMs - this.offsetMs;
    // Ahead of our clock by more than the skew, or before the first year a time may have: clamped.
    if (createMs > this.receivedMs + this.skewMs || createMs < MIN_TIME_MS) {
      return { create: this.received, source: 'clamped' };
    }
    return { create: createMs === this.receivedMs ? this.received : isoTime(createMs), source };
  }
}
