/**
 * One attempt at a batch: the request (body, headers, signature), and what its outcome means for the
 * batch (docs/api.md#delivery): a 2xx delivers it; a network error, the timeout, 408, 429 or 5xx is
 * tried again after a backoff (honouring Retry-After) until the batch has failed for longer than the
 * maximum age; any other status fails it.
 */
import type { DestinationRecord, EventSlice, InFlightBatch, Settlement } from '../../model/destinations.js';
import type { SendResult, Sender } from '../../outbound/sender.js';
import { signatureHeaders } from './signature.js';

export interface AttemptSettings {
  timeoutMs: number;
  backoffMinMs: number;
  backoffMaxMs: number;
  maxAgeMs: number;
}

/** Sends the events of a batch to the destination, signed. */
export function sendBatch(
  sender: Sender,
  record: DestinationRecord,
  batchId: string,
  slice: Pick<EventSlice, 'json'>,
  now: Date,
  timeoutMs: number,
): Promise<SendResult> {
  const body = `{"destination":${JSON.stringify(record.id)},"events":[${slice.json}]}`;
  const timestamp = Math.floor(now.getTime() / 1000);
  return sender.send({
    url: record.url,
    headers: {
      ...record.headers,
      'content-type': 'application/json',
      ...signatureHeaders(record.secret, batchId, timestamp, body),
    },
    body,
    timeoutMs,
  });
}

/** The outcome's words for `last_error` and the failed list. */
export function describe(result: SendResult): string | null {
  if (result.kind === 'error') return result.message;
  if (result.status >= 200 && result.status < 300) return null;
  const text = result.text.replace(/\s+/g, ' ').trim().slice(0, 200);
  return text ? `HTTP ${result.status}: ${text}` : `HTTP ${result.status}`;
}

export function retryable(result: SendResult): boolean {
  if (result.kind === 'error') return true;
  const { status } = result;
  return status === 408 || status === 429 || status >= 500;
}

/** Seconds or an HTTP date, in ms from `now`; null when absent or unreadable. */
export function retryAfterMs(value: string | null, now: Date): number | null {
  if (value === null) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? null : Math.max(0, date - now.getTime());
}

/**
 * The wait before attempt `attempts + 1`: exponential from the minimum to the maximum, with jitter
 * (between half and all of it), at least what Retry-After asks, never above the maximum.
 */
export function backoffMs(attempts: number, retryAfter: number | null, s: AttemptSettings): number {
  const ceiling = Math.min(s.backoffMaxMs, s.backoffMinMs * 2 ** Math.min(30, attempts - 1));
  const jittered = ceiling / 2 + Math.random() * (ceiling / 2);
  return Math.min(s.backoffMaxMs, Math.max(jittered, retryAfter ?? 0));
}

/** What the outcome of an attempt does to its batch. */
export function settlementOf(
  result: SendResult,
  batch: InFlightBatch,
  now: Date,
  s: AttemptSettings,
): Settlement {
  const at = now.toISOString();
  const error = describe(result);
  if (error === null) return { outcome: 'delivered', at };
  if (!retryable(result)) return { outcome: 'failed', at, error };
  const age = now.getTime() - Date.parse(batch.first_attempt);
  if (age >= s.maxAgeMs) {
    return { outcome: 'failed', at, error: `${error} (failing for ${Math.round(age / 1000)} s)` };
  }
  const retryAfter = result.kind === 'response' ? retryAfterMs(result.retryAfter, now) : null;
  const wait = backoffMs(batch.attempts + 1, retryAfter, s);
  return { outcome: 'retry', at, error, next_attempt: new Date(now.getTime() + wait).toISOString() };
}
