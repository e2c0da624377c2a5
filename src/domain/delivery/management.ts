/** What the management API does with destinations beyond storing them: status and the failed list. */
import type { DestinationRecord } from '../../model/destinations.js';
import type { Sender } from '../../outbound/sender.js';
import type { Store } from '../../storage/store.js';
import { describe, sendBatch } from './attempt.js';
import { selectorOf } from './records.js';

export interface DeliveryStatus {
  delivered: number;
  /** Stored events matching the filters that are not delivered yet (the batch in flight included). */
  pending: number;
  failing_since: string | null;
  last_error: string | null;
  /** Batches in the failed list. */
  failed: number;
}

/** A destination with its status, or null when unknown. */
export async function destinationStatus(
  store: Store,
  id: string,
): Promise<(DestinationRecord & { status: DeliveryStatus }) | null> {
  const state = await store.destinations.state(id);
  if (!state) return null;
  const pending = await store.destinations.count(selectorOf(state.record), state.cursor);
  return {
    ...state.record,
    status: {
      delivered: state.delivered,
      pending,
      failing_since: state.failing_since,
      last_error: state.last_error,
      failed: state.failed,
    },
  };
}

/** Pending events of every destination (for metrics). */
export async function pendingByDestination(store: Store): Promise<Map<string, number>> {
  const pending = new Map<string, number>();
  for (const record of await store.destinations.list()) {
    const state = await store.destinations.state(record.id);
    if (state) pending.set(record.id, await store.destinations.count(selectorOf(state.record), state.cursor));
  }
  return pending;
}

export interface RetryDeps {
  store: Store;
  sender: Sender;
  clock: () => Date;
  timeoutMs: number;
}

export interface RetryOutcome {
  batch_id: string;
  delivered: boolean;
  error: string | null;
}

const retrying = new Set<string>();

/**
 * Sends a failed batch again, once, with its own webhook-id: delivered, it leaves the failed list;
 * otherwise it stays there with this attempt's error. Null when the destination or batch is unknown.
 * A batch already being sent again by this process is not sent twice at once.
 */
export async function retryFailed(
  deps: RetryDeps,
  id: string,
  batchId: string,
): Promise<RetryOutcome | null> {
  const { store } = deps;
  const record = await store.destinations.get(id);
  const failed = record ? await store.destinations.getFailed(id, batchId) : null;
  if (!record || !failed) return null;
  const key = JSON.stringify([id, batchId]);
  if (retrying.has(key)) return { batch_id: batchId, delivered: false, error: 'being sent again already' };
  retrying.add(key);
  try {
    const slice = await store.destinations.readIds(failed.ids);
    const error =
      slice.ids.length === 0
        ? null
        : describe(await sendBatch(deps.sender, record, batchId, slice, deps.clock(), deps.timeoutMs));
    await store.destinations.resolveFailed(id, batchId, error === null ? { delivered: true } : { error });
    return { batch_id: batchId, delivered: error === null, error };
  } finally {
    retrying.delete(key);
  }
}
