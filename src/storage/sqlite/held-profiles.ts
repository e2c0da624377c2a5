/**
 * Profiles changed by recent commits whose row in `profiles` is not rewritten yet
 * (docs/architecture.md#held-profiles). Each commit that changes a profile appends its new document
 * to `profile_log` (the end of one table: no random page) and holds the record here; a profile's
 * row is written once its first change since the row was last written is older than `holdMs`, so
 * a profile changed by many requests in that time is written once, and a row is never more than
 * about that behind, however often its profile changes. The writer reads held profiles from here,
 * so every read sees the latest commit; the log makes each hold durable, and opening the store
 * writes what a crash left in it.
 * Held only while this process holds the data folder's lock: nothing else writes the store then.
 */
import type { ProfileRecord } from '../../model/records.js';
import { TextMap } from './text-map.js';

/** Most profiles held, and most characters of their documents: past either the oldest are written. */
export const HOLD_BOUNDS = {
  maxEntries: 10_000,
  maxChars: 16 * 1024 * 1024,
};

/** How long a change may wait before its profile's row is written, in milliseconds. */
export const HOLD_MS = 1_000;

/** A change to hold: the profile's latest record, as a commit left it. */
export interface Change {
  record: ProfileRecord;
  /** The record as JSON: what its row receives. */
  text: string;
  /** The `profile_log` row holding `text`. */
  seq: number;
  /** When it was committed (Date.now()). */
  at: number;
}

/**
 * A held profile: its latest change, with the log row and the time of the first change held since
 * its row was last written (`at` is that time).
 */
export interface Held extends Change {
  firstSeq: number;
}

/**
 * Held first, first in the order: a profile held again keeps its place and the time and log row of
 * its first held change. Log rows grow with time, so the first entry has the smallest first log
 * row, and no hold needs a row below it (each needs its latest, which is at least its first).
 */
export class HeldProfiles {
  private readonly entries = new TextMap<Held>();

  constructor(private readonly bounds = HOLD_BOUNDS) {}

  get size(): number {
    return this.entries.size;
  }

  get(id: string): Held | undefined {
    return this.entries.get(id);
  }

  hold(id: string, change: Change): void {
    const before = this.entries.get(id);
    if (before === undefined) this.entries.set(id, { ...change, firstSeq: change.seq });
    else this.entries.replace(id, { ...change, at: before.at, firstSeq: before.firstSeq });
  }

  /** Forgets a profile's hold (its profile is gone: merged into another). */
  drop(id: string): void {
    this.entries.delete(id);
  }

  /** When the oldest held change was made (Infinity when nothing is held). */
  get oldestAt(): number {
    return this.entries.first()?.[1].at ?? Infinity;
  }

  /** The log rows below this one are no longer needed (Infinity when nothing is held). */
  get firstNeeded(): number {
    return this.entries.first()?.[1].firstSeq ?? Infinity;
  }

  /**
   * Takes out the holds to write now: all of them, or those whose first held change was made before
   * `before` and those past the bounds, oldest first.
   */
  take(before: number | 'all'): [string, Held][] {
    const taken: [string, Held][] = [];
    for (const [id, held] of this.entries) {
      const over = this.entries.size > this.bounds.maxEntries || this.entries.chars > this.bounds.maxChars;
      if (before !== 'all' && held.at >= before && !over) break;
      taken.push([id, held]);
      this.entries.delete(id);
    }
    return taken;
  }

  /** The holds, oldest first. */
  [Symbol.iterator](): IterableIterator<[string, Held]> {
    return this.entries[Symbol.iterator]();
  }

  /** Forgets every hold (the log is read again: see profiles.ts). */
  clear(): void {
    this.entries.clear();
  }
}
