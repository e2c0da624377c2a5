/**
 * The sessions the embedded store read or wrote lately, on the service's thread, so that the
 * requests of a known session find it without a round trip to the writer thread and without parsing
 * its document again (docs/architecture.md#the-write-path). The embedded store is the only writer of
 * its file (one process, one writer thread), so the cache follows every change: the store updates it
 * when a write set commits and clears it when a merge or an erasure changed sessions it does not
 * track one by one. Records are shared, never changed in place: the pipeline makes new ones.
 */
import type { SessionRecord, StoredSession } from '../../model/records.js';
import { withLatestRequest } from '../../model/sessions.js';

/** Most sessions kept, and most bytes of their documents (as JSON text, 2 bytes a character). */
export const SESSION_CACHE_BOUNDS = { maxEntries: 10_000, maxBytes: 32 * 1024 * 1024 };

interface Entry {
  id: string;
  /** The record as stored, without the time of its latest request. */
  record: SessionRecord;
  version: number;
  /** The `update_time` column: the latest request that did not rewrite the record, or null. */
  latest: string | null;
  bytes: number;
  /** Neighbours in the order of use (a linked list: moving an entry costs no search). */
  older: Entry | null;
  newer: Entry | null;
}

/** Least recently used first: a hit makes its entry the newest, the oldest go past a bound. */
export class SessionCache {
  private readonly entries = new Map<string, Entry>();
  private oldest: Entry | null = null;
  private newest: Entry | null = null;
  private bytes = 0;
  /** Reads on their way from the writer: a change of the session meanwhile makes the read too old to keep. */
  private readonly reading = new Map<string, symbol>();

  constructor(private readonly bounds = SESSION_CACHE_BOUNDS) {}

  get size(): number {
    return this.entries.size;
  }

  /** The session as getSession answers it, or undefined when it is not kept. */
  get(id: string): StoredSession | undefined {
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    this.unlink(entry);
    this.link(entry);
    return { record: withLatestRequest(entry.record, entry.latest), version: entry.version };
  }

  /** Marks a read of the session from the store; `read` keeps its answer unless the session changed since. */
  reads(id: string): symbol {
    const token = Symbol(id);
    this.reading.set(id, token);
    return token;
  }

  /** What a read answered (see `reads`), null for no session: kept when it is still the latest. */
  read(
    id: string,
    token: symbol,
    stored: { record: SessionRecord; version: number; latest: string | null; chars: number } | null,
  ): void {
    if (this.reading.get(id) !== token) return;
    this.reading.delete(id);
    if (stored) this.set(stored.record, stored.version, stored.latest, stored.chars);
  }

  /** Keeps a session as stored: its record, version and `update_time`; `chars` its document's length. */
  private set(record: SessionRecord, version: number, latest: string | null, chars: number): void {
    this.delete(record.id);
    const bytes = chars * 2;
    if (bytes > this.bounds.maxBytes) return;
    const entry: Entry = { id: record.id, record, version, latest, bytes, older: null, newer: null };
    this.entries.set(record.id, entry);
    this.link(entry);
    this.bytes += bytes;
    while (this.oldest && (this.entries.size > this.bounds.maxEntries || this.bytes > this.bounds.maxBytes))
      this.delete(this.oldest.id);
  }

  /** Makes `entry` the newest. */
  private link(entry: Entry): void {
    entry.older = this.newest;
    entry.newer = null;
    if (this.newest) this.newest.newer = entry;
    else this.oldest = entry;
    this.newest = entry;
  }

  private unlink(entry: Entry): void {
    if (entry.older) entry.older.newer = entry.newer;
    else this.oldest = entry.newer;
    if (entry.newer) entry.newer.older = entry.older;
    else this.newest = entry.older;
    entry.older = entry.newer = null;
  }

  /** A committed write of the session's record (`expectVersion` null: it was inserted). */
  written(record: SessionRecord, expectVersion: number | null, chars: number): void {
    if (expectVersion === null) {
      this.set(record, 1, null, chars);
      return;
    }
    const entry = this.entries.get(record.id);
    // Without the entry, its `update_time` is unknown: read it again next time.
    if (entry?.version !== expectVersion) this.delete(record.id);
    else this.set(record, expectVersion + 1, entry.latest, chars);
  }

  /** A committed touch: the time of the session's latest request, when later (as the writer keeps it). */
  touched(id: string, at: string): void {
    this.reading.delete(id);
    const entry = this.entries.get(id);
    if (entry && (entry.latest === null || entry.latest < at)) entry.latest = at;
  }

  delete(id: string): void {
    this.reading.delete(id);
    const entry = this.entries.get(id);
    if (!entry) return;
    this.entries.delete(id);
    this.unlink(entry);
    this.bytes -= entry.bytes;
  }

  clear(): void {
    this.reading.clear();
    this.entries.clear();
    this.oldest = this.newest = null;
    this.bytes = 0;
  }
}
