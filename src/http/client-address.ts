import { isIP } from 'node:net';
import type { FastifyRequest } from 'fastify';

/** `1.2.3.4:5678` and `[2001:db8::1]:443`: an address with a port, as some proxies write it. */
const WITH_PORT = /^(?:\[([^\]]+)\]|(\d{1,3}(?:\.\d{1,3}){3})):\d{1,5}$/;

/**
 * The client's address (docs/api.md#client-address): what Fastify's `trustProxy` makes of the socket's
 * peer and `X-Forwarded-For` (configured by TRACK_TRUST_PROXY in server-options.ts), when it is an IP
 * address (a port is dropped); null when it is not (a forwarded value that is no address).
 */
export function clientAddress(request: FastifyRequest): string | null {
  const raw = request.ip as string | undefined;
  if (!raw) return null;
  if (isIP(raw) !== 0) return raw;
  const m = raw.length <= 64 ? WITH_PORT.exec(raw) : null;
  const address = m ? (m[1] ?? m[2]!) : '';
  return isIP(address) !== 0 ? address : null;
}

/** The request's User-Agent header, or null. */
export function userAgent(request: FastifyRequest): string | null {
  const value = request.headers['user-agent'];
  return typeof value === 'string' && value !== '' ? value : null;
}
