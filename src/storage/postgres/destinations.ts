/**
 * Destinations of the PostgreSQL store. Several collectors share the work: each destination is
 * delivered by the holder of its lease (taken with FOR UPDATE SKIP LOCKED, timed by the database's
 * clock), and every write of delivery state checks that the writer still holds it. Changes of the
 * records are announced to the other processes (notify.ts).
 */
import type pg from 'pg';
import type {
  DeliveryState,
  DestinationRecord,
  EventSelector,
  EventSlice,
  FailedBatch,
  InFlightBatch,
  Settlement,
} from '../../model/destinations.js';
import { failedAgain, settle, stateOf, type StateRow } from '../delivery-state.js';
import type { DestinationStore, EventPosition } from '../store.js';
import { countFrom, readIds, readSlice, type Query } from './delivery-reads.js';
import { announce } from './notify.js';
import { storable } from './statements.js';

type Transaction = <T>(fn: (client: pg.PoolClient) => Promise<T>) => Promise<T>;

const NOW_MS = '(extract(epoch from clock_timestamp()) * 1000)::bigint';

const SQL = {
  put: `WITH changed AS (UPDATE destinations SET doc = $2 WHERE id = $1 RETURNING 1),
    created AS (INSERT INTO destinations (id, doc, cursor)
      SELECT $1, $2, lpad(pg_snapshot_xmin(pg_current_snapshot())::text, 20, '0') || '.' || repeat('0', 20)
      WHERE NOT EXISTS (SELECT FROM changed) RETURNING 1)
    SELECT EXISTS (SELECT FROM created) AS created`,
  get: 'SELECT doc FROM destinations WHERE id = $1',
  list: 'SELECT doc FROM destinations ORDER BY id',
  delete: 'DELETE FROM destinations WHERE id = $1',
  state: `SELECT d.*, (SELECT count(*) FROM destination_failed f WHERE f.destination_id = d.id)::int AS failed
    FROM destinations d WHERE d.id = $1`,
  lease: `UPDATE destinations SET lease_owner = $2, lease_until = ${NOW_MS} + $3
    WHERE id = (SELECT id FROM destinations WHERE id = $1
      AND (lease_owner IS NULL OR lease_owner = $2 OR lease_until < ${NOW_MS}) FOR UPDATE SKIP LOCKED)`,
  release: 'UPDATE destinations SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = $1',
  begin: 'UPDATE destinations SET batch = $3 WHERE id = $1 AND lease_owner = $2 AND batch IS NULL',
  lockRow: 'SELECT * FROM destinations WHERE id = $1 AND lease_owner = $2 FOR UPDATE',
  settle: `UPDATE destinations SET cursor = $2, delivered = $3, failing_since = $4, last_error = $5, batch = $6
    WHERE id = $1`,
  insertFailed:
    'INSERT INTO destination_failed (destination_id, batch_id, failed_at, doc) VALUES ($1, $2, $3, $4)',
  advance: `UPDATE destinations SET cursor = $3
    WHERE id = $1 AND lease_owner = $2 AND batch IS NULL AND cursor < $3`,
  listFailed: `SELECT doc FROM destination_failed WHERE destination_id = $1
    ORDER BY failed_at DESC, batch_id DESC LIMIT $2`,
  listFailedAfter: `SELECT doc FROM destination_failed WHERE destination_id = $1
    AND (failed_at, batch_id) < ($3, $4) ORDER BY failed_at DESC, batch_id DESC LIMIT $2`,
  getFailed: 'SELECT doc FROM destination_failed WHERE destination_id = $1 AND batch_id = $2',
  lockFailed: 'SELECT doc FROM destination_failed WHERE destination_id = $1 AND batch_id = $2 FOR UPDATE',
  deleteFailed: 'DELETE FROM destination_failed WHERE destination_id = $1 AND batch_id = $2',
  updateFailed: 'UPDATE destination_failed SET doc = $3 WHERE destination_id = $1 AND batch_id = $2',
  addDelivered: 'UPDATE destinations SET delivered = delivered + $2 WHERE id = $1',
};

const parse = <T>(rows: { doc: string }[]): T[] => rows.map((row) => JSON.parse(row.doc) as T);

export class PostgresDestinations implements DestinationStore {
  constructor(
    private readonly query: Query,
    private readonly transaction: Transaction,
  ) {}

  async put(record: DestinationRecord): Promise<boolean> {
    return this.transaction(async (client) => {
      const id = storable(record.id);
      const { rows } = await client.query<{ created: boolean }>(SQL.put, [id, JSON.stringify(record)]);
      await client.query(announce('destination'), [id]);
      return rows[0]?.created === true;
    });
  }

  async get(id: string): Promise<DestinationRecord | null> {
    const { rows } = await this.query<{ doc: string }>(SQL.get, [storable(id)]);
    return parse<DestinationRecord>(rows)[0] ?? null;
  }

  async list(): Promise<DestinationRecord[]> {
    return parse<DestinationRecord>((await this.query<{ doc: string }>(SQL.list, [])).rows);
  }

  async delete(id: string): Promise<boolean> {
    return this.transaction(async (client) => {
      const deleted = ((await client.query(SQL.delete, [storable(id)])).rowCount ?? 0) > 0;
      if (deleted) await client.query(announce('destination'), [storable(id)]);
      return deleted;
    });
  }

  async state(id: string): Promise<DeliveryState | null> {
    const { rows } = await this.query<StateRow & { failed: number }>(SQL.state, [storable(id)]);
    const row = rows[0];
    return row ? stateOf(row, row.failed) : null;
  }

  async lease(id: string, owner: string, ms: number): Promise<DeliveryState | null> {
    const { rows } = await this.query(`WITH l AS (${SQL.lease} RETURNING id) SELECT id FROM l`, [
      storable(id),
      owner,
      ms,
    ]);
    return rows.length > 0 ? this.state(id) : null;
  }

  async release(owner: string): Promise<void> {
    await this.query(SQL.release, [owner]);
  }

  read(selector: EventSelector, from: string, limit: number): Promise<EventSlice> {
    return readSlice(this.query, selector, from, limit);
  }

  readIds(ids: string[]): Promise<Omit<EventSlice, 'next'>> {
    return readIds(this.query, ids);
  }

  count(selector: EventSelector, from: string): Promise<number> {
    return countFrom(this.query, selector, from);
  }

  async begin(id: string, owner: string, batch: InFlightBatch): Promise<boolean> {
    const result = await this.query(SQL.begin, [storable(id), owner, JSON.stringify(batch)]);
    return result.rowCount !== 0;
  }

  async settle(id: string, owner: string, batchId: string, settlement: Settlement): Promise<boolean> {
    return this.transaction(async (client) => {
      const key = storable(id);
      const row = (await client.query<StateRow>(SQL.lockRow, [key, owner])).rows[0];
      const next = row ? settle(row, batchId, settlement) : null;
      if (!next) return false;
      const r = next.row;
      await client.query(SQL.settle, [key, r.cursor, r.delivered, r.failing_since, r.last_error, r.batch]);
      if (next.failed) {
        const f = next.failed;
        await client.query(SQL.insertFailed, [key, f.batch_id, f.failed_at, JSON.stringify(f)]);
      }
      return true;
    });
  }

  async advance(id: string, owner: string, to: string): Promise<boolean> {
    const result = await this.query(SQL.advance, [storable(id), owner, to]);
    return result.rowCount !== 0;
  }

  async listFailed(id: string, limit: number, after: EventPosition | null): Promise<FailedBatch[]> {
    const { rows } = after
      ? await this.query<{ doc: string }>(SQL.listFailedAfter, [storable(id), limit, after.insert, after.id])
      : await this.query<{ doc: string }>(SQL.listFailed, [storable(id), limit]);
    return parse<FailedBatch>(rows);
  }

  async getFailed(id: string, batchId: string): Promise<FailedBatch | null> {
    const { rows } = await this.query<{ doc: string }>(SQL.getFailed, [storable(id), storable(batchId)]);
    return parse<FailedBatch>(rows)[0] ?? null;
  }

  async resolveFailed(
    id: string,
    batchId: string,
    result: { delivered: true } | { error: string },
  ): Promise<boolean> {
    return this.transaction(async (client) => {
      const keys = [storable(id), storable(batchId)];
      const row = (await client.query<{ doc: string }>(SQL.lockFailed, keys)).rows[0];
      if (!row) return false;
      const failed = JSON.parse(row.doc) as FailedBatch;
      if ('error' in result) {
        await client.query(SQL.updateFailed, [...keys, JSON.stringify(failedAgain(failed, result.error))]);
      } else {
        await client.query(SQL.deleteFailed, keys);
        await client.query(SQL.addDelivered, [keys[0], failed.events]);
      }
      return true;
    });
  }
}
