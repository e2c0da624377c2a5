import assert from 'node:assert/strict';
import { test } from 'node:test';
import { payload, startService } from './helpers.js';

test('a tracked event can be read back', async (t) => {
  const service = await startService();
  t.after(() => service.close());
  await service.createSource();
  const res = await service.post('/track', payload());
  assert.equal(res.statusCode, 200);
  const page = await service.get('/events');
  assert.equal(page.json().result.length, 1);
});
