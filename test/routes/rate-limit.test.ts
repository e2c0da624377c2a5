import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SourceRateLimiter } from '../../src/domain/rate-limit.js';
import { sourceFromInput } from '../../src/domain/sources.js';
import { payload, startService } from '../helpers.js';

test('rate limiting is off by default', async (t) => {
  const service = await startService();
  t.after(() => service.close());
  await service.createSource();
  const statuses = await Promise.all(Array.from({ length: 50 }, () => service.post('/track', payload())));
  assert.ok(statuses.every((r) => r.statusCode === 200));
});

test('a source over its own rate_limit gets 429 with Retry-After on /track and /collect', async (t) => {
  const service = await startService();
  t.after(() => service.close());
  const created = await service.createSource({ rate_limit: 3 });
  assert.equal(created.rate_limit, 3);
  await service.createSource({ id: 'free' });
  // Fired together, they fall in one or two one-second windows: at most 6 can pass.
  const results = await Promise.all(Array.from({ length: 20 }, () => service.post('/track', payload())));
  const limited = results.filter((r) => r.statusCode === 429);
  assert.ok(limited.length >= 14, `429s: ${limited.length}`);
  assert.ok(results.every((r) => r.statusCode === 200 || r.statusCode === 429));
  assert.equal(limited[0]!.headers['retry-after'], '1');
  assert.match(limited[0]!.json().detail, /Rate limit of 3 requests per second exceeded for source `src-1`/);
  const collects = await Promise.all(Array.from({ length: 10 }, () => service.post('/collect/x/src-1', {})));
  assert.ok(collects.some((r) => r.statusCode === 429));
  const other = await service.post('/track', payload({ source: { id: 'free' } }));
  assert.equal(other.statusCode, 200, 'other sources are not limited');
});

test('TRACK_RATE_LIMIT applies to every source without its own limit', async (t) => {
  const service = await startService({ rateLimit: 2 });
  t.after(() => service.close());
  await service.createSource();
  const results = await Promise.all(Array.from({ length: 12 }, () => service.post('/track', payload())));
  assert.ok(results.filter((r) => r.statusCode === 429).length >= 8);
});

test('the limiter counts per one-second window', () => {
  let now = 10_000;
  const limiter = new SourceRateLimiter(0, () => now);
  const source = sourceFromInput({ id: 's', rate_limit: 2 });
  limiter.check(source);
  limiter.check(source);
  assert.throws(() => limiter.check(source), /Rate limit/);
  now += 1000;
  limiter.check(source);
  assert.doesNotThrow(() => new SourceRateLimiter(0).check(sourceFromInput({ id: 'unlimited' })));
});

test('a source without rate_limit has exactly the documented record', async (t) => {
  const service = await startService();
  t.after(() => service.close());
  assert.deepEqual(Object.keys(await service.createSource()).sort(), [
    'consent',
    'description',
    'enabled',
    'id',
    'name',
    'returns_profile',
    'tags',
    'transitional',
    'type',
  ]);
});
