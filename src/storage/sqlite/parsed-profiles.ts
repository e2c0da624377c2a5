/**
 * The profiles the writer thread read or wrote lately, each with the JSON text it came from: a read
 * that finds the same text stored takes the parsed record instead of parsing the text again (a
 * returning visitor's rules change the same profiles over and over). The stored text is compared
 * every time, so a hit is right whatever wrote the row last (a rolled-back batch, a merge, an
 * erasure) and nothing needs to be told of changes. Records are shared, never changed in place:
 * profile operations make new ones (src/model/profile-ops.ts).
 */
import type { ProfileRecord } from '../../model/records.js';

/** Most profiles kept, most characters of their texts, and the longest text kept. */
export const PARSED_PROFILE_BOUNDS = {
  maxEntries: 10_000,
  maxChars: 16 * 1024 * 1024,
  maxTextChars: 256 * 1024,
};

interface Entry {
  text: string;
  record: ProfileRecord;
}

/** Oldest written first out: Map keeps insertion order, and every write inserts again. */
export class ParsedProfiles {
  private readonly entries = new Map<string, Entry>();
  private chars = 0;

  constructor(private readonly bounds = PARSED_PROFILE_BOUNDS) {}

  get size(): number {
    return this.entries.size;
  }

  /** The record parsed from exactly this text, if it is kept. */
  get(id: string, text: string): ProfileRecord | undefined {
    const entry = this.entries.get(id);
    return entry !== undefined && entry.text === text ? entry.record : undefined;
  }

  /** Keeps `record` as what `text`, stored for `id`, means. */
  set(id: string, text: string, record: ProfileRecord): void {
    this.delete(id);
    if (text.length > this.bounds.maxTextChars) return;
    this.entries.set(id, { text, record });
    this.chars += text.length;
    while (this.entries.size > this.bounds.maxEntries || this.chars > this.bounds.maxChars) {
      this.delete(this.entries.keys().next().value!);
    }
  }

  private delete(id: string): void {
    const entry = this.entries.get(id);
    if (entry === undefined) return;
    this.entries.delete(id);
    this.chars -= entry.text.length;
  }
}
