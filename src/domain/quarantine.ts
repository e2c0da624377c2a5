import type { Store } from '../storage/store.js';
import type { RejectedRecord } from '../model/records.js';
import type { ValidationFailed } from './errors.js';

export interface QuarantineSettings {
  /** Records older than this many days are deleted. */
  maxAgeDays: number;
  /** At most this many records are kept (the newest). */
  maxCount: number;
}

export type RejectedInput = Omit<RejectedRecord, 'id' | 'time' | 'detail' | 'errors'>;

const PRUNE_EVERY_MS = 60_000;
const PRUNE_EVERY_RECORDS = 500;

/**
 * Requests refused by validation are kept with their failures and original payload, so that they can
 * be inspected and replayed after a schema fix. Retention is bounded by age and count.
 */
export class Quarantine {
  private lastPrune = 0;
  private sincePrune = 0;

  constructor(
    private readonly store: Store,
    private readonly settings: QuarantineSettings,
    private readonly clock: () => Date,
    private readonly newId: () => string,
  ) {}

  async record(input: RejectedInput, rejection: ValidationFailed): Promise<RejectedRecord> {
    const record: RejectedRecord = {
      id: this.newId(),
      time: this.clock().toISOString(),
      ...input,
      detail: rejection.message,
      errors: rejection.failures,
    };
    await this.store.putRejected(record);
    this.sincePrune++;
    const now = this.clock().getTime();
    if (now - this.lastPrune >= PRUNE_EVERY_MS || this.sincePrune >= PRUNE_EVERY_RECORDS) await this.prune();
    return record;
  }

  /** A replay refused by validation again: the record keeps its place and now says why. */
  async refusedAgain(record: RejectedRecord, rejection: ValidationFailed): Promise<RejectedRecord> {
    const updated = { ...record, detail: rejection.message, errors: rejection.failures };
    await this.store.putRejected(updated);
    return updated;
  }

  /** Applies the retention bounds; returns how many records were deleted. */
  async prune(): Promise<number> {
    const now = this.clock().getTime();
    this.lastPrune = now;
    this.sincePrune = 0;
    const before = new Date(now - this.settings.maxAgeDays * 86_400_000).toISOString();
    return this.store.pruneRejected(before, this.settings.maxCount);
  }
}
