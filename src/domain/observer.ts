/** What the pipeline reports as it works (counted by src/metrics.ts). */
export interface PipelineObserver {
  /** Events of requests answered 200 (stored or not). */
  eventsAccepted(count: number): void;
  /** Events committed to the store. */
  eventsStored(count: number): void;
  /** Events of refused requests, by reason. */
  eventsRejected(count: number, reason: 'validation' | 'source' | 'rate_limit'): void;
  /** Refused requests not kept in the quarantine: over its rate, or deleted by its retention. */
  rejectedDropped(count: number, reason: 'rate_limit' | 'retention'): void;
  /** Events not stored because their client id was already stored for their source. */
  eventsDuplicate(sourceId: string, count: number): void;
  /** Events of requests answered 200 without storing anything, by reason. */
  eventsDropped(count: number, reason: 'bot'): void;
  /** Seconds from handing a write set to the store until it was durable. */
  commitDuration(seconds: number): void;
  /** Profile rules applied to committed events (one per rule and event). */
  rulesApplied(count: number): void;
  /** Profiles merged into another by committed requests. */
  profilesMerged(count: number): void;
}

/** What delivery reports as it works (counted by src/metrics.ts). */
export interface DeliveryObserver {
  /** A batch was delivered: its events and, for each, seconds from being stored to being delivered. */
  batchDelivered(destination: string, lagsSec: number[]): void;
  /** An attempt did not deliver its batch: `retry` or `failed` (moved to the failed list). */
  batchNotDelivered(destination: string, outcome: 'retry' | 'failed'): void;
}

/** Where delivery writes what an operator should see (never secrets, headers or URLs). */
export interface DeliveryLog {
  warn(fields: Record<string, unknown>, message: string): void;
}
