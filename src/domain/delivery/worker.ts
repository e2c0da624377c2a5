/**
 * Delivery runs beside the HTTP server, never on the path of a request: one loop per destination,
 * each delivering one batch at a time, in commit order (docs/api.md#delivery). A loop delivers only
 * while its process holds the destination's lease (src/storage/store.ts: DestinationStore), so
 * several processes sharing a database share the destinations and never send one batch at once.
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { DestinationRecord, EventSlice, InFlightBatch } from '../../model/destinations.js';
import type { Sender } from '../../outbound/sender.js';
import type { Store } from '../../storage/store.js';
import type { DeliveryLog, DeliveryObserver } from '../observer.js';
import { describe, sendBatch, settlementOf, type AttemptSettings } from './attempt.js';
import { selectorOf } from './records.js';

export interface DeliverySettings extends AttemptSettings {
  /** How long a lease lasts; renewed at every step. Must be well above `timeoutMs`. */
  leaseMs: number;
  /** Wait before looking again when all was delivered. */
  idleMs: number;
  /** How often the list of destinations is read again (changes also apply at once through `changed`). */
  refreshMs: number;
}

export interface DeliveryDeps {
  store: Store;
  sender: Sender;
  observer: DeliveryObserver;
  log: DeliveryLog;
  clock: () => Date;
  newId: () => string;
  settings: DeliverySettings;
}

/** The cursor is moved over events that matched nothing at most this often. */
const ADVANCE_EVERY_MS = 1000;
/** Wait after a step failed (the store unavailable, say). */
const ERROR_WAIT_MS = 1000;

export class DeliveryWorker {
  /** This process, as the owner of leases. */
  readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly loops = new Map<string, DestinationLoop>();
  private timer: NodeJS.Timeout | null = null;
  private running = false;

  constructor(private readonly deps: DeliveryDeps) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    void this.refresh();
    this.timer = setInterval(() => void this.refresh(), this.deps.settings.refreshMs);
    this.timer.unref();
  }

  /** A destination changed (here or in another process): its loop looks at once; null: any. */
  changed(id: string | null): void {
    if (!this.running) return;
    if (id !== null && this.loops.has(id)) this.loops.get(id)!.wake();
    else void this.refresh();
  }

  /** Stops every loop, letting a batch being sent finish (within the timeout), and gives up the leases. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await Promise.all([...this.loops.values()].map((loop) => loop.stop()));
    this.loops.clear();
    await this.deps.store.destinations.release(this.owner).catch(() => undefined);
  }

  private async refresh(): Promise<void> {
    let records: DestinationRecord[];
    try {
      records = await this.deps.store.destinations.list();
    } catch {
      return; // the store is unavailable: the next refresh tries again
    }
    if (!this.running) return;
    for (const record of records) {
      if (this.loops.has(record.id)) continue;
      const loop = new DestinationLoop(record.id, this.deps, this.owner);
      this.loops.set(record.id, loop);
      void loop.run().finally(() => {
        if (this.loops.get(record.id) === loop) this.loops.delete(record.id);
      });
    }
  }
}

class DestinationLoop {
  private stopped = false;
  private wakeUp: (() => void) | null = null;
  private done: Promise<void> = Promise.resolve();
  private lastAdvance = 0;
  /** Until when this process holds the lease, by its own clock (0: not held). */
  private leasedUntil = 0;
  /** Where reading goes on when the last read found nothing to deliver ('' : at the cursor). */
  private scanned = '';

  constructor(
    private readonly id: string,
    private readonly deps: DeliveryDeps,
    private readonly owner: string,
  ) {}

  run(): Promise<void> {
    this.done = this.loop();
    return this.done;
  }

  wake(): void {
    this.wakeUp?.();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake();
    await this.done;
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      let wait: number | 'gone';
      try {
        wait = await this.step();
      } catch (error) {
        this.deps.log.warn({ destination: this.id, err: String(error) }, 'delivery step failed');
        wait = ERROR_WAIT_MS;
      }
      if (wait === 'gone') return;
      if (wait > 0 && !this.stopped) await this.sleep(wait);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wakeUp = null;
        resolve();
      }, ms);
      timer.unref();
      this.wakeUp = () => {
        clearTimeout(timer);
        this.wakeUp = null;
        resolve();
      };
    });
  }

  /** One step: lease, then the batch in flight or the next one. Returns how long to wait. */
  private async step(): Promise<number | 'gone'> {
    const { store, settings, clock } = this.deps;
    const destinations = store.destinations;
    // The lease is renewed once half of it has passed; until then the state is only read.
    const started = Date.now();
    const renew = started >= this.leasedUntil - settings.leaseMs / 2;
    const state = renew
      ? await destinations.lease(this.id, this.owner, settings.leaseMs)
      : await destinations.state(this.id);
    if (state && !renew && state.lease?.owner !== this.owner) {
      this.leasedUntil = 0;
      return 0;
    }
    if (state && renew) this.leasedUntil = started + settings.leaseMs;
    if (!state) {
      this.leasedUntil = 0;
      this.scanned = '';
      return (await destinations.get(this.id)) ? settings.leaseMs / 3 : 'gone';
    }
    const { record } = state;
    if (!record.enabled) return settings.refreshMs;
    const now = clock();
    let batch = state.batch;
    let slice: Omit<EventSlice, 'next'>;
    if (batch) {
      const due = batch.next_attempt ? Date.parse(batch.next_attempt) - now.getTime() : 0;
      // Waiting, the loop comes back in time to renew the lease.
      if (due > 0) return Math.min(due, settings.leaseMs / 3);
      slice = await destinations.readIds(batch.ids);
    } else {
      // Events that matched nothing are passed over in memory; the stored cursor follows now and then.
      const from = this.scanned > state.cursor ? this.scanned : state.cursor;
      const read = await destinations.read(selectorOf(record), from, record.batch_size);
      if (read.ids.length === 0) {
        this.scanned = read.next;
        if (read.next > state.cursor && now.getTime() - this.lastAdvance >= ADVANCE_EVERY_MS) {
          this.lastAdvance = now.getTime();
          await destinations.advance(this.id, this.owner, read.next);
        }
        return settings.idleMs;
      }
      batch = {
        id: `msg_${this.deps.newId()}`,
        ids: read.ids,
        end: read.next,
        first_attempt: now.toISOString(),
        attempts: 0,
        next_attempt: null,
      };
      if (!(await destinations.begin(this.id, this.owner, batch))) return 0;
      slice = read;
    }
    return this.attempt(record, batch, slice);
  }

  private async attempt(
    record: DestinationRecord,
    batch: InFlightBatch,
    slice: Omit<EventSlice, 'next'>,
  ): Promise<number> {
    const { store, sender, observer, settings, clock, log } = this.deps;
    // Events erased since the batch was made are not sent; a batch left empty is done.
    const result =
      slice.ids.length === 0
        ? ({ kind: 'response', status: 204, retryAfter: null, text: '' } as const)
        : await sendBatch(sender, record, batch.id, slice, clock(), settings.timeoutMs);
    const now = clock();
    const settlement = settlementOf(result, batch, now, settings);
    const settled = await store.destinations.settle(this.id, this.owner, batch.id, settlement);
    if (!settled) return 0; // deleted, or the lease lost meanwhile: look again
    if (settlement.outcome === 'delivered') {
      observer.batchDelivered(
        this.id,
        slice.times.map((time) => Math.max(0, now.getTime() - Date.parse(time)) / 1000),
      );
      return slice.ids.length >= record.batch_size ? 0 : settings.idleMs;
    }
    observer.batchNotDelivered(this.id, settlement.outcome);
    log.warn(
      { destination: this.id, batch: batch.id, attempts: batch.attempts + 1, error: describe(result) },
      settlement.outcome === 'failed' ? 'batch moved to the failed list' : 'delivery failed; will retry',
    );
    return settlement.outcome === 'retry'
      ? Math.min(Date.parse(settlement.next_attempt) - now.getTime(), settings.leaseMs / 3)
      : 0;
  }
}
