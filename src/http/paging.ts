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

/**
 * One page of a listing ordered newest first by (time, id): fetches one more than `limit` to know
 * whether a next page exists, and signs its cursor for this listing (`scope`).
 */
export async function cursorPage<T>(
  cursors: CursorCodec,
  scope: string,
  limit: number,
  cursor: string | undefined,
  fetch: (limit: number, after: EventPosition | null) => Promise<T[]>,
  position: (item: T) => EventPosition,
): Promise<{ result: T[]; next: string | null }> {
  const after = cursor === undefined ? null : cursors.decode(scope, cursor);
  const page = await fetch(limit + 1, after);
  const result = page.slice(0, limit);
  const last = result[result.length - 1];
  return { result, next: page.length > limit && last ? cursors.encode(scope, position(last)) : null };
}
