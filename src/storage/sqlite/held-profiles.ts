/**
 * Profiles changed by recent commits whose row in `profiles` is not rewritten yet
 * (docs/architecture.md#held-profiles). Each commit that changes a profile appends its new
 * document, or its diff (profile-log.ts), to `profile_log` (the end of one table: no random page)
 * and holds the record here. A profile's row is written once its last change is `HOLD_MS` old, so
 * a profile changed by many requests in that time is written once; and once its first change since
 * the row was last written is `MAX_HOLD_MS` old, so that a row is never further behind than that,
 * however often its profile changes. The writer reads held profiles from here, so every read sees
 * the latest commit; the log makes each hold durable, and opening the store writes what a crash
 * left in it.
 * Held only while this process holds the data folder's lock: nothing else writes the store then.
 */
import type { ProfileRecord } from '../../model/records.js';
import { TextMap } from './text-map.js';

/** Most profiles held, and most characters of their documents: past either the oldest are written. */
export const HOLD_BOUNDS = {
  maxEntries: 10_000,
  maxChars: 16 * 1024 * 1024,
};

/** How long a profile's row waits after its last change, in milliseconds. */
export const HOLD_MS = 1_000;

/** How long a profile's row waits after its first change since it was last written, at most. */
export const MAX_HOLD_MS = 5_000;

/**
 * The clock of holds, in milliseconds: one that never goes back (a wall clock set back would keep
 * every hold from being due). Its times are compared only within the thread that made them: the
 * store writes every hold when it opens.
 */
export function holdClock(): number {
  return Math.round(performance.timeOrigin + performance.now());
}

/** A change to hold: the profile's latest record, as a commit left it. */
export interface Held {
  record: ProfileRecord;
  /**
   * The record as JSON (what its row receives), or null until first needed: a change logged as
   * its diff (profile-log.ts) leaves the document to be made when read or written.
   */
  text: string | null;
  /** The characters of `text`, or at most this many: the last known size plus those of the diffs since. */
  size: number;
  /** The latest `profile_log` row of the record. */
  seq: number;
  /** When it was committed (holdClock()). */
  at: number;
}

/** The first change held since a profile's row was last written: its log row and time. */
interface First {
  seq: number;
  at: number;
}

/**
 * Two orders of the same profiles. `latest`: by last change, a profile held again moving to the end.
 * `first`: by first held change, a profile held again keeping its place; log rows grow with time,
 * so its first entry has the smallest first log row, and no hold needs a row below it (each needs
 * its latest, which is at least its first).
 */
export class HeldProfiles {
  private readonly latest = new TextMap<Held>();
  private readonly first = new Map<string, First>();

  constructor(private readonly bounds = HOLD_BOUNDS) {}

  get size(): number {
    return this.latest.size;
  }

  get(id: string): Held | undefined {
    return this.latest.get(id);
  }

  /** Holds a profile's latest change (a later one than any it holds). */
  hold(id: string, held: Held): void {
    this.latest.set(id, held);
    if (!this.first.has(id)) this.first.set(id, { seq: held.seq, at: held.at });
  }

  /** Forgets a profile's hold (its profile is gone: merged into another). */
  drop(id: string): void {
    this.latest.delete(id);
    this.first.delete(id);
  }

  /** True when take(now) would take a hold. */
  due(now: number): boolean {
    const idle = this.latest.first()?.[1].at ?? Infinity;
    const oldest = this.first.values().next().value?.at ?? Infinity;
    return idle < now - HOLD_MS || oldest < now - MAX_HOLD_MS || this.over();
  }

  /** The log rows below this one are no longer needed (Infinity when nothing is held). */
  get firstNeeded(): number {
    return this.first.values().next().value?.seq ?? Infinity;
  }

  /**
   * Takes out the holds to write now: all of them, or at `now` those whose last change is `HOLD_MS`
   * old, those whose first held change is `MAX_HOLD_MS` old, and the oldest past the bounds.
   */
  take(now: number | 'all'): [string, Held][] {
    const taken: [string, Held][] = [];
    const out = (id: string, held: Held) => {
      taken.push([id, held]);
      this.drop(id);
    };
    if (now !== 'all') {
      for (const [id, first] of this.first) {
        if (first.at >= now - MAX_HOLD_MS) break;
        out(id, this.latest.get(id)!);
      }
    }
    for (const [id, held] of this.latest) {
      if (now !== 'all' && held.at >= now - HOLD_MS && !this.over()) break;
      out(id, held);
    }
    return taken;
  }

  /** Forgets every hold (the log is read again: see profiles.ts). */
  clear(): void {
    this.latest.clear();
    this.first.clear();
  }

  private over(): boolean {
    return this.latest.size > this.bounds.maxEntries || this.latest.chars > this.bounds.maxChars;
  }
}
