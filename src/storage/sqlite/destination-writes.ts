/**
 * The writes of destinations and their delivery state, run by the writer thread (writer.ts) like
 * every write of the embedded store. Each is one short transaction: delivery reads the events on
 * the service's thread, never here.
 */
import type Database from 'better-sqlite3';
import { position, type FailedBatch, type Settlement } from '../../model/destinations.js';
import { failedAgain, settle, type StateRow } from '../delivery-state.js';

/** `firstFreeRun`: the number the next run would get (writes.ts), read inside the transaction. */
export function prepareDestinationWrites(db: Database.Database, firstFreeRun: () => number) {
  const s = {
    exists: db.prepare('SELECT 1 FROM destinations WHERE id = ?').pluck(),
    insert: db.prepare('INSERT INTO destinations (id, doc, cursor) VALUES (?, ?, ?)'),
    replace: db.prepare('UPDATE destinations SET doc = ? WHERE id = ?'),
    delete: db.prepare('DELETE FROM destinations WHERE id = ?'),
    deleteFailedOf: db.prepare('DELETE FROM destination_failed WHERE destination_id = ?'),
    lease: db.prepare(
      `UPDATE destinations SET lease_owner = ?, lease_until = ?
        WHERE id = ? AND (lease_owner IS NULL OR lease_owner = ? OR lease_until < ?)`,
    ),
    release: db.prepare(
      'UPDATE destinations SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = ?',
    ),
    releaseAll: db.prepare('UPDATE destinations SET lease_owner = NULL, lease_until = NULL'),
    begin: db.prepare('UPDATE destinations SET batch = ? WHERE id = ? AND lease_owner = ? AND batch IS NULL'),
    row: db.prepare('SELECT * FROM destinations WHERE id = ? AND lease_owner = ?'),
    settle: db.prepare(
      `UPDATE destinations SET cursor = ?, delivered = ?, failing_since = ?, last_error = ?, batch = ?
        WHERE id = ?`,
    ),
    insertFailed: db.prepare(
      'INSERT INTO destination_failed (destination_id, batch_id, failed_at, doc) VALUES (?, ?, ?, ?)',
    ),
    advance: db.prepare(
      'UPDATE destinations SET cursor = ? WHERE id = ? AND lease_owner = ? AND batch IS NULL AND cursor < ?',
    ),
    getFailed: db
      .prepare('SELECT doc FROM destination_failed WHERE destination_id = ? AND batch_id = ?')
      .pluck(),
    deleteFailed: db.prepare('DELETE FROM destination_failed WHERE destination_id = ? AND batch_id = ?'),
    updateFailed: db.prepare(
      'UPDATE destination_failed SET doc = ? WHERE destination_id = ? AND batch_id = ?',
    ),
    addDelivered: db.prepare('UPDATE destinations SET delivered = delivered + ? WHERE id = ?'),
  };
  // One process serves the data folder: leases of an earlier run of it are void.
  s.releaseAll.run();

  return {
    /** Creates (cursor at the next run: only later events) or replaces; true when created. */
    putDestination: db.transaction((id: string, doc: string): boolean => {
      if (s.exists.get(id) !== undefined) {
        s.replace.run(doc, id);
        return false;
      }
      s.insert.run(id, doc, position(firstFreeRun(), 0));
      return true;
    }).immediate,
    deleteDestination: db.transaction((id: string): boolean => {
      s.deleteFailedOf.run(id);
      return s.delete.run(id).changes > 0;
    }).immediate,
    leaseDestination(id: string, owner: string, until: number, now: number): boolean {
      return s.lease.run(owner, until, id, owner, now).changes > 0;
    },
    releaseDestinations(owner: string): void {
      s.release.run(owner);
    },
    beginBatch(id: string, owner: string, batch: string): boolean {
      return s.begin.run(batch, id, owner).changes > 0;
    },
    settleBatch: db.transaction(
      (id: string, owner: string, batchId: string, settlement: Settlement): boolean => {
        const row = s.row.get(id, owner) as StateRow | undefined;
        if (!row) return false;
        const next = settle(row, batchId, settlement);
        if (!next) return false;
        const r = next.row;
        s.settle.run(r.cursor, r.delivered, r.failing_since, r.last_error, r.batch, id);
        if (next.failed) {
          s.insertFailed.run(id, next.failed.batch_id, next.failed.failed_at, JSON.stringify(next.failed));
        }
        return true;
      },
    ).immediate,
    advanceCursor(id: string, owner: string, to: string): boolean {
      return s.advance.run(to, id, owner, to).changes > 0;
    },
    resolveFailed: db.transaction((id: string, batchId: string, error: string | null): boolean => {
      const doc = s.getFailed.get(id, batchId) as string | undefined;
      if (doc === undefined) return false;
      const failed = JSON.parse(doc) as FailedBatch;
      if (error === null) {
        s.deleteFailed.run(id, batchId);
        s.addDelivered.run(failed.events, id);
      } else {
        s.updateFailed.run(JSON.stringify(failedAgain(failed, error)), id, batchId);
      }
      return true;
    }).immediate,
  };
}
