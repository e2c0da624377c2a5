import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { errors } from './errors.js';

const digest = (text: string) => createHash('sha256').update(text).digest();

/** onRequest hook of the management API (docs/api.md#authentication): `Authorization: Bearer <token>`, constant time. */
export function bearerAuth(token: string) {
  const expected = digest(token);
  return async (request: FastifyRequest) => {
    const match = /^Bearer[ ]+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    if (!match || !timingSafeEqual(digest(match[1]!), expected)) throw errors.notAuthenticated();
  };
}
