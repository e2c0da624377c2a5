import type { PipelineObserver } from './observer.js';
import type { Quarantine, RejectedInput } from './quarantine.js';
import type { RateLimiter } from './rate-limit.js';
import type { EventSource } from '../model/records.js';
import type { SourceCache } from './sources.js';
import { ValidationFailed } from './errors.js';

/**
 * The first step of /track and /collect: the client address must be within its rate limit, and the
 * request's source must exist, be enabled and be within its own (RateLimited, UnknownSource or
 * SourceDisabled otherwise). Refused events are counted by reason.
 */
export async function admitSource(
  deps: { sources: SourceCache; limiter: RateLimiter; observer: PipelineObserver },
  sourceId: string,
  client: string | null,
  eventCount: number,
): Promise<EventSource> {
  const limited = (check: () => void) => {
    try {
      check();
    } catch (error) {
      deps.observer.eventsRejected(eventCount, 'rate_limit');
      throw error;
    }
  };
  limited(() => deps.limiter.checkClient(client));
  const source = await deps.sources.require(sourceId).catch((error: unknown) => {
    deps.observer.eventsRejected(eventCount, 'source');
    throw error;
  });
  limited(() => deps.limiter.checkSource(source));
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
