/**
 * A small in-memory cache whose entries expire after `ttlMs` (0 disables caching), bounded in
 * entries and in bytes (docs/security.md). Misses are cached too (the loader's `null` is an answer),
 * in a bound of their own, so that a flood of unknown keys never pushes out the known ones.
 * Concurrent loads of one key share one call.
 *
 * Entries are kept in insertion order: the first is always the oldest, so expired entries are
 * dropped from the front whenever an entry is added, without being read again; past a bound, the
 * oldest go first.
 */
export interface CacheBounds {
  /** Most cached values (found), and most cached misses. */
  maxEntries: number;
  /** Most bytes of cached values, as `sizeOf` estimates them. */
  maxBytes: number;
}

interface Entry<V> {
  value: V | null;
  expires: number;
  bytes: number;
}

/** Entries of one kind (values or misses) in insertion order, within a count and a byte budget. */
class Shelf<V> {
  readonly entries = new Map<string, Entry<V>>();
  bytes = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxBytes: number,
  ) {}

  add(key: string, entry: Entry<V>, now: number): void {
    this.remove(key);
    this.entries.set(key, entry);
    this.bytes += entry.bytes;
    for (const [oldest, first] of this.entries) {
      const over = this.entries.size > this.maxEntries || this.bytes > this.maxBytes;
      if (!over && first.expires > now) break;
      this.remove(oldest);
    }
  }

  remove(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.bytes -= entry.bytes;
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }
}

/** Bytes a key and its bookkeeping take, besides the value. */
const ENTRY_OVERHEAD = 100;

export class TtlCache<V> {
  private readonly found: Shelf<V>;
  private readonly missing: Shelf<V>;
  private readonly loading = new Map<string, Promise<V | null>>();

  constructor(
    private readonly ttlMs: number,
    private readonly load: (key: string) => Promise<V | null>,
    bounds: CacheBounds,
    private readonly sizeOf: (value: V) => number,
    private readonly now: () => number = Date.now,
  ) {
    this.found = new Shelf(bounds.maxEntries, bounds.maxBytes);
    this.missing = new Shelf(bounds.maxEntries, bounds.maxBytes);
  }

  async get(key: string): Promise<V | null> {
    const hit = this.found.entries.get(key) ?? this.missing.entries.get(key);
    if (hit && hit.expires > this.now()) return hit.value;
    const pending = this.loading.get(key);
    if (pending) return pending;
    const promise = this.load(key).then(
      (value) => {
        if (this.ttlMs > 0 && this.loading.get(key) === promise) this.keep(key, value);
        this.loading.delete(key);
        return value;
      },
      (error: unknown) => {
        this.loading.delete(key);
        throw error;
      },
    );
    this.loading.set(key, promise);
    return promise;
  }

  private keep(key: string, value: V | null): void {
    const now = this.now();
    const bytes = ENTRY_OVERHEAD + key.length * 2 + (value === null ? 0 : this.sizeOf(value));
    const entry = { value, expires: now + this.ttlMs, bytes };
    (value === null ? this.found : this.missing).remove(key);
    (value === null ? this.missing : this.found).add(key, entry, now);
  }

  /** Forgets a key at once (a change made through this process). */
  invalidate(key: string): void {
    this.found.remove(key);
    this.missing.remove(key);
    this.loading.delete(key);
  }

  clear(): void {
    this.found.clear();
    this.missing.clear();
    this.loading.clear();
  }

  /** What the cache holds now: entries (found and missing) and the estimated bytes of both. */
  get size(): { entries: number; bytes: number } {
    return {
      entries: this.found.entries.size + this.missing.entries.size,
      bytes: this.found.bytes + this.missing.bytes,
    };
  }
}
