import { performance } from 'node:perf_hooks';
import type { Store } from '../storage/store.js';
import type { PipelineObserver } from './observer.js';
import type { CommitResult, WriteSet } from '../model/records.js';

/** Hands a write set to the store and reports how long it took to become durable. */
export async function commitWriteSet(
  store: Store,
  observer: PipelineObserver,
  writeSet: WriteSet,
): Promise<CommitResult> {
  const started = performance.now();
  const result = await store.commit(writeSet);
  observer.commitDuration((performance.now() - started) / 1000);
  if (result.ok) observer.eventsStored(writeSet.events.length - result.duplicates.length);
  return result;
}
