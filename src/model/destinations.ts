/**
 * Destinations and their delivery (docs/api.md#destinations): the records shared by the delivery
 * pipeline (src/domain/delivery) and the store adapters.
 */

/** A system that receives every stored event matching its filters (docs/api.md#destination). */
export interface DestinationRecord {
  id: string;
  name: string;
  url: string;
  enabled: boolean;
  /** Event types delivered; empty: every type. */
  event_types: string[];
  /** Event sources whose events are delivered; empty: every source. */
  source_ids: string[];
  batch_size: number;
  headers: Record<string, string>;
  /** Standard Webhooks signing secret, `whsec_` + base64. */
  secret: string;
}

/**
 * A place in the commit order of stored events, as the store defines it: two numbers written as
 * 20 digits each (`<major>.<minor>`), so that positions compare as plain strings. The store alone
 * knows what the numbers mean.
 */
export type DeliveryPosition = string;

export function position(major: bigint | number | string, minor: bigint | number | string): DeliveryPosition {
  return `${String(major).padStart(20, '0')}.${String(minor).padStart(20, '0')}`;
}

/** The two numbers of a position, as decimal strings without leading zeros. */
export function positionParts(at: DeliveryPosition): [string, string] {
  const [major = '0', minor = '0'] = at.split('.');
  const trim = (digits: string) => digits.replace(/^0+(?=\d)/, '');
  return [trim(major), trim(minor)];
}

/** The batch a destination is delivering: fixed when first sent, the same on every retry. */
export interface InFlightBatch {
  /** `webhook-id` of every attempt. */
  id: string;
  /** The events' ids, in commit order. */
  ids: string[];
  /** Where the destination's cursor goes once the batch is settled. */
  end: DeliveryPosition;
  first_attempt: string;
  attempts: number;
  /** When the next attempt is due (null: now). */
  next_attempt: string | null;
}

/** A destination's delivery, as stored. */
export interface DeliveryState {
  record: DestinationRecord;
  /** The first position not delivered yet. */
  cursor: DeliveryPosition;
  /** Events delivered so far (2xx answers). */
  delivered: number;
  failing_since: string | null;
  last_error: string | null;
  /** Batches in the failed list. */
  failed: number;
  batch: InFlightBatch | null;
  /** The process delivering now, and until when (ms since the epoch, by the store's clock). */
  lease: { owner: string; until: number } | null;
}

/** A batch moved to the failed list (docs/api.md#failed-batches). */
export interface FailedBatch {
  batch_id: string;
  failed_at: string;
  first_attempt: string;
  attempts: number;
  error: string;
  events: number;
  ids: string[];
}

/** The filters of a destination, as the store applies them when reading events. */
export interface EventSelector {
  eventTypes: string[];
  sourceIds: string[];
}

/** Stored events read for delivery, in commit order. */
export interface EventSlice {
  ids: string[];
  /** `metadata.time.insert` of each event. */
  times: string[];
  /** The events' JSON texts, joined by commas (the inside of a JSON array). */
  json: string;
  /** Where the next read starts: after the last event read, or at the head when all was read. */
  next: DeliveryPosition;
}

/** What happened to a batch sent. */
export type Settlement =
  | { outcome: 'delivered'; at: string }
  | { outcome: 'retry'; at: string; error: string; next_attempt: string }
  | { outcome: 'failed'; at: string; error: string };
