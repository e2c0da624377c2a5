/**
 * Reads by id, many at once: the reads asked for while the process handles one round of I/O are
 * sent as one statement (`… WHERE id = ANY($1)`) when the round ends. Under load, the session and
 * profile reads of the requests that arrived together cost the database one statement instead of
 * one each; a lone read waits for nothing but the end of its round. A read is sent after it was
 * asked for, so it sees every write committed before (docs/architecture.md#the-write-path).
 */
type Waiter<R> = [resolve: (value: R | null) => void, reject: (error: unknown) => void];

/** Ids per statement, at most. */
const MAX_IDS = 500;

export class ReadBatch<R> {
  private waiting = new Map<string, Waiter<R>[]>();
  private scheduled = false;

  /** `readMany` answers the records found, by id (ids not found are absent). */
  constructor(private readonly readMany: (ids: string[]) => Promise<Map<string, R>>) {}

  read(id: string): Promise<R | null> {
    return new Promise((resolve, reject) => {
      const waiters = this.waiting.get(id);
      if (waiters) waiters.push([resolve, reject]);
      else this.waiting.set(id, [[resolve, reject]]);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const all = [...this.waiting];
    this.waiting = new Map();
    for (let start = 0; start < all.length; start += MAX_IDS) {
      const part = all.slice(start, start + MAX_IDS);
      this.readMany(part.map(([id]) => id)).then(
        (found) => {
          for (const [id, waiters] of part) for (const [resolve] of waiters) resolve(found.get(id) ?? null);
        },
        (error: unknown) => {
          for (const [, waiters] of part) for (const [, reject] of waiters) reject(error);
        },
      );
    }
  }
}
