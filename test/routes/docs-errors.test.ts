/** The documentation tells the truth about errors: every documented error response is JSON, as sent. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startService } from '../helpers.js';
import { expectStatus, type Json } from './support.js';

test('every documented error response of every route is JSON, as the service sends it', async () => {
  const service = await startService();
  try {
    const doc = expectStatus(await service.app.inject({ method: 'GET', url: '/docs/json' }), 200);
    for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
      for (const [method, op] of Object.entries(item)) {
        for (const [code, response] of Object.entries((op.responses ?? {}) as Record<string, Json>)) {
          if (!/^[45]/.test(code)) continue;
          assert.deepEqual(
            Object.keys(response.content ?? {}),
            ['application/json'],
            `${method.toUpperCase()} ${path} ${code}`,
          );
        }
      }
    }
    const res = await service.app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(res.statusCode, 401);
    assert.match(String(res.headers['content-type']), /^application\/json/);
  } finally {
    await service.close();
  }
});
