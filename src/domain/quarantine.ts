import type { RejectedRecord } from '../model/records.js';
import type { Store } from '../storage/store.js';
import type { ValidationFailed } from './errors.js';
import type { PipelineObserver } from './observer.js';
import { SecondWindows } from './rate-limit.js';

export interface QuarantineSettings {
  /** Records older than this many days are deleted. */
  maxAgeDays: number;
  /** At most this many records are kept (the newest). */
  maxCount: number;
  /** At most this many bytes of records are kept (the newest). */
  maxBytes: number;
  /** Records of one source kept per second; 0 is unlimited. */
  perSourcePerSecond: number;
}

export type RejectedInput = Omit<RejectedRecord, 'id' | 'time' | 'detail' | 'errors'>;

const PRUNE_EVERY_MS = 60_000;
const PRUNE_EVERY_RECORDS = 500;
/** Share of the byte budget written between two prunes, at most: the budget is overshot by no more. */
const PRUNE_EVERY_BUDGET_SHARE = 8;

/**
 * Requests refused by validation are kept with their failures and original payload, so that they can
 * be inspected and replayed after a schema fix (docs/api.md#quarantine). What anyone with a source id
 * can fill is bounded: records of one source are kept at a limited rate (the request is answered 406
 * either way), and retention keeps the newest within an age, a count and a byte budget. What is not
 * kept is counted (`collector_rejected_dropped_total`).
 */
export class Quarantine {
  private lastPrune = 0;
  private sincePrune = 0;
  private bytesSincePrune = 0;
  private readonly windows: SecondWindows;

  constructor(
    private readonly store: Store,
    private readonly settings: QuarantineSettings,
    private readonly observer: Pick<PipelineObserver, 'rejectedDropped'>,
    private readonly clock: () => Date,
    private readonly newId: () => string,
  ) {
    this.windows = new SecondWindows(() => this.clock().getTime());
  }

  /** Keeps a refused request; null when its source is over the rate at which records are kept. */
  async record(input: RejectedInput, rejection: ValidationFailed): Promise<RejectedRecord | null> {
    const { perSourcePerSecond } = this.settings;
    if (perSourcePerSecond > 0 && this.windows.hit(input.source_id) > perSourcePerSecond) {
      this.observer.rejectedDropped(1, 'rate_limit');
      return null;
    }
    const record: RejectedRecord = {
      id: this.newId(),
      time: this.clock().toISOString(),
      ...input,
      profile_id: input.profile_id ?? rejection.profileId,
      detail: rejection.message,
      errors: rejection.failures,
    };
    const bytes = await this.store.putRejected(record);
    this.sincePrune++;
    this.bytesSincePrune += bytes;
    const now = this.clock().getTime();
    if (
      now - this.lastPrune >= PRUNE_EVERY_MS ||
      this.sincePrune >= PRUNE_EVERY_RECORDS ||
      this.bytesSincePrune * PRUNE_EVERY_BUDGET_SHARE >= this.settings.maxBytes
    ) {
      await this.prune();
    }
    return record;
  }

  /**
   * A replay refused by validation again: the record keeps its place and now says why. A record gone
   * meanwhile (replayed by another request, erased, pruned) is not put back: null.
   */
  async refusedAgain(record: RejectedRecord, rejection: ValidationFailed): Promise<RejectedRecord | null> {
    const updated = { ...record, detail: rejection.message, errors: rejection.failures };
    return (await this.store.updateRejected(updated)) ? updated : null;
  }

  /** Applies the retention bounds; returns how many records were deleted. */
  async prune(): Promise<number> {
    const now = this.clock().getTime();
    this.lastPrune = now;
    this.sincePrune = 0;
    this.bytesSincePrune = 0;
    const before = new Date(now - this.settings.maxAgeDays * 86_400_000).toISOString();
    const { maxCount, maxBytes } = this.settings;
    const deleted = await this.store.pruneRejected(before, maxCount, maxBytes);
    if (deleted > 0) this.observer.rejectedDropped(deleted, 'retention');
    return deleted;
  }
}
