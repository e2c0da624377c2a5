import type { PipelineObserver } from './observer.js';
import type { Quarantine, RejectedInput } from './quarantine.js';
import type { SourceRateLimiter } from './rate-limit.js';
import type { EventSource } from '../model/records.js';
import type { SourceCache } from './sources.js';
import { ValidationFailed } from './errors.js';

/**
 * The first step of /track and /collect: the request's source must exist, be enabled and be within
 * its rate limit (UnknownSource, SourceDisabled or RateLimited otherwise). Refused events are counted by reason.
 */
export async function admitSource(
  deps: { sources: SourceCache; limiter: SourceRateLimiter; observer: PipelineObserver },
  sourceId: string,
  eventCount: number,
): Promise<EventSource> {
  const source = await deps.sources.require(sourceId).catch((error: unknown) => {
    deps.observer.eventsRejected(eventCount, 'source');
    throw error;
  });
  try {
    deps.limiter.check(source);
  } catch (error) {
    deps.observer.eventsRejected(eventCount, 'rate_limit');
    throw error;
  }
  return source;
}

/**
 * What happens to a request that failed: a validation refusal is counted and kept in the quarantine
 * (absent when replaying from it). The error is thrown on either way.
 */
export async function refuse(
  deps: { observer: PipelineObserver; quarantine?: Quarantine },
  error: unknown,
  eventCount: number,
  rejected: RejectedInput,
): Promise<never> {
  if (error instanceof ValidationFailed) {
    deps.observer.eventsRejected(eventCount, 'validation');
    await deps.quarantine?.record(rejected, error);
  }
  throw error;
}
