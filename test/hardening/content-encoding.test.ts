/** Compressed bodies (docs/api.md#json-bodies): accepted, limited by their decompressed size. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deflateSync, gzipSync } from 'node:zlib';
import { payload, startService } from '../helpers.js';
import { answerOf, assertError, expectStatus } from './support.js';

test('gzip and deflate bodies are decompressed; the limit applies to what they inflate to', async (t) => {
  const service = await startService({ bodyLimit: 100_000 });
  t.after(() => service.close());
  await service.createSource();
  const send = (body: Buffer, encoding: string) =>
    service.app.inject({
      method: 'POST',
      url: '/track',
      headers: { 'content-encoding': encoding, 'content-type': 'application/json' },
      payload: body,
    });
  const json = Buffer.from(JSON.stringify(payload({ session: { id: 'gz' } })));
  expectStatus(await send(gzipSync(json), 'gzip'), 200, 'gzip');
  expectStatus(await send(deflateSync(json), 'deflate'), 200, 'deflate');
  expectStatus(await send(gzipSync(json), 'GZIP'), 200, 'any letter case');
  expectStatus(await send(json, 'identity'), 200, 'identity');

  // 50 MB of spaces inside a valid JSON body compress to about 50 KB: a 413, not 50 MB in memory.
  const bomb = gzipSync(
    Buffer.concat([Buffer.from('{"a":"'), Buffer.alloc(50_000_000, 0x20), Buffer.from('"}')]),
  );
  assert.ok(bomb.length < 100_000);
  assertError(answerOf(await send(bomb, 'gzip')), 413, 'zip bomb');
  // Just over the limit once inflated, although small on the wire.
  const over = gzipSync(Buffer.from(JSON.stringify({ ...payload(), pad: 'x'.repeat(100_000) })));
  assertError(answerOf(await send(over, 'gzip')), 413, 'over the limit once inflated');

  assertError(answerOf(await send(json, 'gzip')), 400, 'not gzip at all');
  assertError(answerOf(await send(gzipSync(json).subarray(0, 20), 'gzip')), 400, 'cut short');
  const br = assertError(answerOf(await send(json, 'br')), 415, 'brotli');
  assert.match(br.detail, /Content-Encoding `br` is not supported/);
});

test('a request without a body is not refused for its Content-Encoding header', async (t) => {
  const service = await startService();
  t.after(() => service.close());
  const res = await service.app.inject({
    method: 'GET',
    url: '/health',
    headers: { 'content-encoding': 'br' },
  });
  expectStatus(res, 200, 'GET /health with Content-Encoding: br');
});
