import type { Store } from '../storage/store.js';
import type { CommitResult } from '../model/records.js';
import { commitWriteSet } from './commit.js';
import { NotFound } from './errors.js';
import type { PipelineObserver } from './observer.js';

/**
 * A replay claims its quarantined record in the commit that stores its events (`WriteSet.replayOf`):
 * of concurrent replays of one record, in one process or several, exactly one commits; the others
 * find the record gone and answer as a replay sent after it would (docs/api.md#replay).
 */
export function recordGone(replayOf: string): NotFound {
  return new NotFound('Rejected request', replayOf);
}

/** The outcome of a replay's commit, with the record gone thrown as `recordGone`. */
export function claimed(result: CommitResult, replayOf: string | undefined): CommitResult {
  if (!result.ok && result.conflict === 'rejected') throw recordGone(replayOf ?? '');
  return result;
}

/**
 * The claim alone, for a replay that stores nothing (a transitional source, a bot's request dropped,
 * options that save nothing): the record still leaves the quarantine in one commit, and only once.
 */
export async function claimOnly(
  deps: { store: Store; observer: PipelineObserver },
  replayOf: string | undefined,
): Promise<void> {
  if (replayOf === undefined) return;
  claimed(await commitWriteSet(deps.store, deps.observer, { events: [], replayOf }), replayOf);
}
