import type { Store } from '../storage/store.js';

export interface RetentionSettings {
  /** Events inserted more than this many days ago are deleted. */
  days: number;
  /** About how many events one batch deletes (one short transaction). */
  batchEvents?: number;
  /** Shortest pause between two batches. */
  pauseMs?: number;
  /**
   * Most of the store's time deletions may take: after a batch that took t ms, the pause is at least
   * t × (1 − share) / share, so that commits of requests find the store free most of the time.
   */
  share?: number;
  /** Time between two passes (a pass deletes batches until nothing is left to delete). */
  everyMs?: number;
  /** Delay of the first pass after start. */
  firstPassMs?: number;
}

export interface RetentionHooks {
  /** Events a batch deleted. */
  deleted?(count: number): void;
  /** A pass that failed (the store unavailable, say); the next pass tries again. */
  failed?(error: unknown): void;
}

const DAY_MS = 86_400_000;

/**
 * Event retention (docs/api.md#event-retention): in the background, events older than the bound
 * are deleted in small batches with pauses between them, never in one long transaction.
 */
export class EventRetention {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | null = null;
  private stopped = false;
  private readonly batchEvents: number;
  private readonly pauseMs: number;
  private readonly share: number;
  private readonly everyMs: number;

  constructor(
    private readonly store: Store,
    private readonly settings: RetentionSettings,
    private readonly clock: () => Date,
    private readonly hooks: RetentionHooks = {},
  ) {
    this.batchEvents = settings.batchEvents ?? 500;
    this.pauseMs = settings.pauseMs ?? 20;
    this.share = settings.share ?? 0.2;
    this.everyMs = settings.everyMs ?? 10 * 60_000;
  }

  /** Schedules the passes: the first soon after start, then one every `everyMs`. */
  start(): void {
    this.schedule(this.settings.firstPassMs ?? 5_000);
  }

  /** Stops scheduling and waits for the batch under way, if any. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** Deletes batches until none is left older than the bound (or until stopped); answers how many went. */
  pass(): Promise<number> {
    this.running ??= this.deleteAll().finally(() => (this.running = null));
    return this.running;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.pass().then(
        () => this.schedule(this.everyMs),
        (error: unknown) => {
          this.hooks.failed?.(error);
          this.schedule(this.everyMs);
        },
      );
    }, ms);
    this.timer.unref();
  }

  private async deleteAll(): Promise<number> {
    const before = new Date(this.clock().getTime() - this.settings.days * DAY_MS).toISOString();
    let total = 0;
    while (!this.stopped) {
      const started = performance.now();
      const count = await this.store.deleteEventsBefore(before, this.batchEvents);
      if (count === 0) break;
      total += count;
      this.hooks.deleted?.(count);
      const took = performance.now() - started;
      const pause = Math.max(this.pauseMs, (took * (1 - this.share)) / this.share);
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
    return total;
  }
}
