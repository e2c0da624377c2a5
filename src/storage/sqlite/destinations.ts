/**
 * Destinations of the embedded store: reads on the service's reading connection, writes on the
 * writer thread (destination-writes.ts), events for delivery from delivery-reads.ts.
 */
import type Database from 'better-sqlite3';
import type {
  DeliveryState,
  DestinationRecord,
  EventSelector,
  EventSlice,
  FailedBatch,
  InFlightBatch,
  Settlement,
} from '../../model/destinations.js';
import { parseDoc, parseDocs } from '../documents.js';
import { stateOf, type StateRow } from '../delivery-state.js';
import type { DestinationStore, EventPosition } from '../store.js';
import { countFrom, deliveryStatements, readIds, readSlice } from './delivery-reads.js';
import { translate } from './errors.js';
import type { WriteOps } from './writes.js';

type OnWriter = <K extends keyof WriteOps>(
  op: K,
  ...args: Parameters<WriteOps[K]>
) => Promise<ReturnType<WriteOps[K]>>;

function statements(db: Database.Database) {
  return {
    ...deliveryStatements(db),
    get: db.prepare('SELECT doc FROM destinations WHERE id = ?').pluck(),
    list: db.prepare('SELECT doc FROM destinations ORDER BY id').pluck(),
    state: db.prepare('SELECT * FROM destinations WHERE id = ?'),
    failedCount: db.prepare('SELECT count(*) FROM destination_failed WHERE destination_id = ?').pluck(),
    getFailed: db
      .prepare('SELECT doc FROM destination_failed WHERE destination_id = ? AND batch_id = ?')
      .pluck(),
    listFailed: db
      .prepare(
        'SELECT doc FROM destination_failed WHERE destination_id = ? ORDER BY failed_at DESC, batch_id DESC LIMIT ?',
      )
      .pluck(),
    listFailedAfter: db
      .prepare(
        `SELECT doc FROM destination_failed WHERE destination_id = ? AND (failed_at < ? OR (failed_at = ? AND batch_id < ?))
          ORDER BY failed_at DESC, batch_id DESC LIMIT ?`,
      )
      .pluck(),
  };
}

export class SqliteDestinations implements DestinationStore {
  private s: ReturnType<typeof statements> | null = null;

  constructor(private readonly onWriter: OnWriter) {}

  /** Prepares the reads on the store's reading connection (once it is open). */
  attach(db: Database.Database): void {
    this.s = statements(db);
  }

  private run<T>(fn: (s: ReturnType<typeof statements>) => T): Promise<T> {
    try {
      if (!this.s) throw new TypeError('database connection is not open');
      return Promise.resolve(fn(this.s));
    } catch (error) {
      return Promise.reject(translate(error));
    }
  }

  put(record: DestinationRecord): Promise<boolean> {
    return this.onWriter('putDestination', record.id, JSON.stringify(record));
  }

  get(id: string): Promise<DestinationRecord | null> {
    return this.run((s) => parseDoc<DestinationRecord>(s.get.get(id)));
  }

  list(): Promise<DestinationRecord[]> {
    return this.run((s) => parseDocs<DestinationRecord>(s.list.all()));
  }

  delete(id: string): Promise<boolean> {
    return this.onWriter('deleteDestination', id);
  }

  state(id: string): Promise<DeliveryState | null> {
    return this.run((s) => {
      const row = s.state.get(id) as StateRow | undefined;
      return row ? stateOf(row, s.failedCount.get(id) as number) : null;
    });
  }

  async lease(id: string, owner: string, ms: number): Promise<DeliveryState | null> {
    const now = Date.now();
    if (!(await this.onWriter('leaseDestination', id, owner, now + ms, now))) return null;
    return this.state(id);
  }

  release(owner: string): Promise<void> {
    return this.onWriter('releaseDestinations', owner);
  }

  read(selector: EventSelector, from: string, limit: number): Promise<EventSlice> {
    return this.run((s) => readSlice(s, selector, from, limit));
  }

  readIds(ids: string[]): Promise<Omit<EventSlice, 'next'>> {
    return this.run((s) => readIds(s, ids));
  }

  async count(selector: EventSelector, from: string): Promise<number> {
    const s = await this.run((s) => s);
    try {
      return await countFrom(s, selector, from);
    } catch (error) {
      throw translate(error);
    }
  }

  begin(id: string, owner: string, batch: InFlightBatch): Promise<boolean> {
    return this.onWriter('beginBatch', id, owner, JSON.stringify(batch));
  }

  settle(id: string, owner: string, batchId: string, settlement: Settlement): Promise<boolean> {
    return this.onWriter('settleBatch', id, owner, batchId, settlement);
  }

  advance(id: string, owner: string, to: string): Promise<boolean> {
    return this.onWriter('advanceCursor', id, owner, to);
  }

  listFailed(id: string, limit: number, after: EventPosition | null): Promise<FailedBatch[]> {
    return this.run((s) =>
      parseDocs<FailedBatch>(
        after
          ? s.listFailedAfter.all(id, after.insert, after.insert, after.id, limit)
          : s.listFailed.all(id, limit),
      ),
    );
  }

  getFailed(id: string, batchId: string): Promise<FailedBatch | null> {
    return this.run((s) => parseDoc<FailedBatch>(s.getFailed.get(id, batchId)));
  }

  resolveFailed(
    id: string,
    batchId: string,
    result: { delivered: true } | { error: string },
  ): Promise<boolean> {
    return this.onWriter('resolveFailed', id, batchId, 'error' in result ? result.error : null);
  }
}
