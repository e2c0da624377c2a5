/**
 * A small in-memory cache whose entries expire after `ttlMs` (0 disables caching). Misses are cached
 * too: the loader's `null` is an answer. Concurrent loads of one key share one call.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V | null; expires: number }>();
  private readonly loading = new Map<string, Promise<V | null>>();

  constructor(
    private readonly ttlMs: number,
    private readonly load: (key: string) => Promise<V | null>,
    private readonly now: () => number = Date.now,
  ) {}

  async get(key: string): Promise<V | null> {
    const hit = this.entries.get(key);
    if (hit && hit.expires > this.now()) return hit.value;
    const pending = this.loading.get(key);
    if (pending) return pending;
    const promise = this.load(key).then(
      (value) => {
        if (this.ttlMs > 0 && this.loading.get(key) === promise) {
          this.entries.set(key, { value, expires: this.now() + this.ttlMs });
        }
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

  /** Forgets a key at once (a change made through this process). */
  invalidate(key: string): void {
    this.entries.delete(key);
    this.loading.delete(key);
  }

  clear(): void {
    this.entries.clear();
    this.loading.clear();
  }
}
