import { createHmac, timingSafeEqual } from 'node:crypto';
import { errors } from './errors.js';
import type { EventPosition } from '../storage/store.js';

/**
 * Opaque, signed cursors for `GET /events`: the position of the last event of a page, with an HMAC so
 * that a cursor the service did not issue is refused (422) instead of being trusted.
 */
export class CursorCodec {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = createHmac('sha256', 'event-cursor').update(secret).digest();
  }

  /** The listing a cursor belongs to is part of what is signed: one listing's cursor fails another's. */
  private sign(scope: string, payload: string): Buffer {
    return createHmac('sha256', this.key).update(`${scope}\n${payload}`).digest().subarray(0, 16);
  }

  encode(scope: string, position: EventPosition): string {
    const payload = Buffer.from(JSON.stringify([position.insert, position.id])).toString('base64url');
    return `${payload}.${this.sign(scope, payload).toString('base64url')}`;
  }

  decode(scope: string, cursor: string): EventPosition {
    const invalid = errors.invalid(['query', 'cursor'], 'cursor was not issued by this service');
    const [payload, signature, ...rest] = cursor.split('.');
    if (!payload || !signature || rest.length > 0) throw invalid;
    const given = Buffer.from(signature, 'base64url');
    const expected = this.sign(scope, payload);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid;
    const [insert, id] = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as [string, string];
    return { insert, id };
  }
}

/** Most bytes of records in one page (as JSON): a page stops early rather than grow past it. */
export const PAGE_MAX_BYTES = 4 * 1024 * 1024;

/**
 * One page of a listing ordered newest first by (time, id): fetches one more than `limit` to know
 * whether a next page exists, and signs its cursor for this listing (`scope`). A page also stops
 * once its records add up to `maxBytes` of JSON (it always holds at least one): `next` then
 * continues after the last record it holds.
 */
export async function cursorPage<T>(
  cursors: CursorCodec,
  scope: string,
  limit: number,
  cursor: string | undefined,
  fetch: (limit: number, after: EventPosition | null) => Promise<T[]>,
  position: (item: T) => EventPosition,
  maxBytes = PAGE_MAX_BYTES,
): Promise<{ result: T[]; next: string | null }> {
  const after = cursor === undefined ? null : cursors.decode(scope, cursor);
  const page = await fetch(limit + 1, after);
  const result: T[] = [];
  let bytes = 0;
  for (const item of page.slice(0, limit)) {
    bytes += JSON.stringify(item).length;
    if (result.length > 0 && bytes > maxBytes) break;
    result.push(item);
  }
  const last = result[result.length - 1];
  const more = page.length > result.length;
  return { result, next: more && last ? cursors.encode(scope, position(last)) : null };
}
