/**
 * The profiles the writer thread read or wrote lately, each with the JSON text it came from: a read
 * that finds the same text stored takes the parsed record instead of parsing the text again (a
 * returning visitor's rules change the same profiles over and over). The stored text is compared
 * every time, so a hit is right whatever wrote the row last (a merge, an erasure, another process).
 * The writer changes the records it reads in place (profiles.ts): a change written to the row sets
 * the profile's entry again, and a held change deletes it until its row is written; a rolled-back
 * transaction may leave a record changed that its text does not say, so it clears them all.
 */
import type { ProfileRecord } from '../../model/records.js';
import { TextMap } from './text-map.js';

/** Most profiles kept, most characters of their texts, and the longest text kept. */
export const PARSED_PROFILE_BOUNDS = {
  maxEntries: 10_000,
  maxChars: 16 * 1024 * 1024,
  maxTextChars: 256 * 1024,
};

interface Entry {
  text: string;
  size: number;
  record: ProfileRecord;
}

/** Oldest written first out: every write sets its entry last in the order. */
export class ParsedProfiles {
  private readonly entries = new TextMap<Entry>();

  constructor(private readonly bounds = PARSED_PROFILE_BOUNDS) {}

  get size(): number {
    return this.entries.size;
  }

  /** The record parsed from exactly this text, if it is kept. */
  get(id: string, text: string): ProfileRecord | undefined {
    const entry = this.entries.get(id);
    return entry !== undefined && entry.text === text ? entry.record : undefined;
  }

  delete(id: string): void {
    this.entries.delete(id);
  }

  clear(): void {
    this.entries.clear();
  }

  /** Keeps `record` as what `text`, stored for `id`, means. */
  set(id: string, text: string, record: ProfileRecord): void {
    this.entries.delete(id);
    if (text.length > this.bounds.maxTextChars) return;
    this.entries.set(id, { text, size: text.length, record });
    while (this.entries.size > this.bounds.maxEntries || this.entries.chars > this.bounds.maxChars) {
      this.entries.delete(this.entries.first()![0]);
    }
  }
}
