/**
 * Point lookups gathered per turn of the event loop: every key asked for while the loop handles one
 * round of I/O goes out in one call, and each caller gets its own answer. For a store whose lookups
 * cost a message (or a round trip) each, many requests then share one.
 */
export class BatchedLookup<V> {
  private keys: string[] = [];
  private waiting: { resolve: (value: V) => void; reject: (error: unknown) => void }[] = [];
  private scheduled = false;

  constructor(private readonly lookup: (keys: string[]) => Promise<V[]>) {}

  get(key: string): Promise<V> {
    return new Promise((resolve, reject) => {
      this.keys.push(key);
      this.waiting.push({ resolve, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    const keys = this.keys;
    const waiting = this.waiting;
    this.keys = [];
    this.waiting = [];
    this.scheduled = false;
    this.lookup(keys).then(
      (values) => waiting.forEach((w, i) => w.resolve(values[i]!)),
      (error: unknown) => waiting.forEach((w) => w.reject(error)),
    );
  }
}
