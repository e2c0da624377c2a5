import { WriteQueueFullError } from './store.js';

/** Outcome of one item of a batch: its result, or the error that failed it alone. */
export type ItemOutcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

/**
 * Writes a batch in one transaction. Must isolate items (one item's failure does not fail the others)
 * and return one outcome per item, in order. Throwing means the whole transaction failed.
 */
export type BatchWriter<T, R> = (items: T[]) => Promise<ItemOutcome<R>[]> | ItemOutcome<R>[];

interface Pending<T, R> {
  item: T;
  resolve: (value: R) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: items submitted while no batch is being written are gathered and written together
 * in one transaction; each submitter is answered only after that transaction committed.
 * At most `limit` items wait; past that `submit` rejects with WriteQueueFullError.
 * With `maxInFlight` above 1, the next batch is handed over before the previous one has committed
 * (for a writer that runs batches one after the other on a thread of its own), so that gathering and
 * writing overlap instead of taking turns.
 */
export class GroupCommitter<T, R> {
  private queue: Pending<T, R>[] = [];
  private inFlight = 0;
  private scheduled = false;
  private idleWaiters: (() => void)[] = [];
  private readonly maxBatch: number;
  private readonly maxInFlight: number;

  constructor(
    private readonly write: BatchWriter<T, R>,
    private readonly limit: number,
    options: { maxBatch?: number; maxInFlight?: number } = {},
  ) {
    this.maxBatch = options.maxBatch ?? 2000;
    this.maxInFlight = options.maxInFlight ?? 1;
  }

  get depth(): number {
    return this.queue.length;
  }

  submit(item: T): Promise<R> {
    if (this.queue.length >= this.limit) return Promise.reject(new WriteQueueFullError());
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  /** Resolves when everything submitted so far is written. */
  async drain(): Promise<void> {
    while (this.queue.length > 0 || this.inFlight > 0) {
      await new Promise<void>((resolve) => {
        this.idleWaiters.push(resolve);
        this.schedule();
      });
    }
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || this.queue.length === 0) return;
    this.scheduled = true;
    // setImmediate runs after the I/O callbacks of this loop turn: every request parsed in the
    // same turn joins the batch.
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    if (this.inFlight >= this.maxInFlight || this.queue.length === 0) return;
    const batch = this.queue.splice(0, this.maxBatch);
    this.inFlight++;
    void this.run(batch).finally(() => {
      this.inFlight--;
      if (this.queue.length > 0) this.schedule();
      else if (this.inFlight === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
    });
    this.schedule();
  }

  private async run(batch: Pending<T, R>[]): Promise<void> {
    let outcomes: ItemOutcome<R>[];
    try {
      outcomes = await this.write(batch.map((p) => p.item));
    } catch (error) {
      for (const p of batch) p.reject(error);
      return;
    }
    batch.forEach((p, i) => {
      const outcome = outcomes[i];
      if (!outcome) p.reject(new Error('batch writer returned too few outcomes'));
      else if (outcome.ok) p.resolve(outcome.value);
      else p.reject(outcome.error);
    });
  }
}
