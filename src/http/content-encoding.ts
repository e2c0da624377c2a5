import { PassThrough, pipeline, type Readable } from 'node:stream';
import { createGunzip, createInflate } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { errors } from './errors.js';

const DECODERS = { gzip: createGunzip, 'x-gzip': createGunzip, deflate: createInflate } as const;

type Counted = PassThrough & { receivedEncodedLength: number };

/**
 * Bodies sent with `Content-Encoding: gzip` or `deflate` (as several SDKs send them) are decompressed
 * before they are parsed (docs/api.md#json-bodies). The body limit applies to the decompressed
 * bytes: a small body that inflates past it (a zip bomb) is a 413, and decompression stops there
 * because nothing reads further. A body that does not decompress is a 400; another encoding a 415.
 */
export function registerContentEncoding(app: FastifyInstance): void {
  app.addHook('preParsing', async (request, _reply, payload) => {
    const encoding = request.headers['content-encoding']?.trim().toLowerCase();
    if (encoding === undefined || encoding === '' || encoding === 'identity') return payload;
    // A request without a body (a GET, say) has nothing to decode, whatever its headers say.
    const length = request.headers['content-length'];
    if (request.headers['transfer-encoding'] === undefined && (length === undefined || length === '0')) {
      return payload;
    }
    const decoder = DECODERS[encoding as keyof typeof DECODERS];
    if (!decoder) throw errors.unsupportedEncoding(encoding.slice(0, 50));
    const out = new PassThrough() as Counted;
    // What the client sent, for Fastify's check against Content-Length.
    out.receivedEncodedLength = 0;
    payload.on('data', (chunk: Buffer) => (out.receivedEncodedLength += chunk.length));
    pipeline(payload as Readable, decoder(), out, (error) => {
      if (error && !out.destroyed) out.destroy(errors.undecodableBody(encoding, error.message));
    });
    return out;
  });
}
