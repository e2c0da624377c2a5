/**
 * A destination's delivery state as both stores keep it (one row per destination), and the changes
 * that settling a batch makes to it. Adapters read and write the row; the rules live here once.
 */
import type {
  DeliveryState,
  DestinationRecord,
  FailedBatch,
  InFlightBatch,
  Settlement,
} from '../model/destinations.js';

export interface StateRow {
  doc: string;
  cursor: string;
  delivered: number;
  failing_since: string | null;
  last_error: string | null;
  /** The batch in flight, as JSON text. */
  batch: string | null;
  lease_owner: string | null;
  lease_until: number | null;
}

export function stateOf(row: StateRow, failed: number): DeliveryState {
  return {
    record: JSON.parse(row.doc) as DestinationRecord,
    cursor: row.cursor,
    delivered: Number(row.delivered),
    failing_since: row.failing_since,
    last_error: row.last_error,
    failed,
    batch: row.batch === null ? null : (JSON.parse(row.batch) as InFlightBatch),
    lease:
      row.lease_owner === null || row.lease_until === null
        ? null
        : { owner: row.lease_owner, until: Number(row.lease_until) },
  };
}

/** The columns a settlement changes. */
export interface SettledRow {
  cursor: string;
  delivered: number;
  failing_since: string | null;
  last_error: string | null;
  batch: string | null;
}

/**
 * The row after settling its batch, and the failed-list entry it adds; null when `batchId` is not
 * the batch in flight (settled already, or never begun).
 */
export function settle(
  row: StateRow,
  batchId: string,
  settlement: Settlement,
): { row: SettledRow; failed: FailedBatch | null } | null {
  if (row.batch === null) return null;
  const batch = JSON.parse(row.batch) as InFlightBatch;
  if (batch.id !== batchId) return null;
  const attempts = batch.attempts + 1;
  const base = {
    cursor: row.cursor,
    delivered: Number(row.delivered),
    failing_since: row.failing_since,
    last_error: row.last_error,
  };
  switch (settlement.outcome) {
    case 'delivered':
      return {
        row: {
          ...base,
          cursor: batch.end,
          delivered: base.delivered + batch.ids.length,
          failing_since: null,
          batch: null,
        },
        failed: null,
      };
    case 'retry':
      return {
        row: {
          ...base,
          failing_since: row.failing_since ?? settlement.at,
          last_error: settlement.error,
          batch: JSON.stringify({ ...batch, attempts, next_attempt: settlement.next_attempt }),
        },
        failed: null,
      };
    case 'failed':
      return {
        row: {
          ...base,
          cursor: batch.end,
          failing_since: row.failing_since ?? settlement.at,
          last_error: settlement.error,
          batch: null,
        },
        failed: {
          batch_id: batch.id,
          failed_at: settlement.at,
          first_attempt: batch.first_attempt,
          attempts,
          error: settlement.error,
          events: batch.ids.length,
          ids: batch.ids,
        },
      };
  }
}

/** The failed-list entry after one more attempt that did not deliver it. */
export function failedAgain(failed: FailedBatch, error: string): FailedBatch {
  return { ...failed, attempts: failed.attempts + 1, error };
}
