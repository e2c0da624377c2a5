import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RateLimiter } from '../../src/domain/rate-limit.js';
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
  const limiter = new RateLimiter({ perSource: 0, perClient: 0 }, () => now);
  const source = sourceFromInput({ id: 's', rate_limit: 2 });
  limiter.checkSource(source);
  limiter.checkSource(source);
  assert.throws(() => limiter.checkSource(source), /Rate limit/);
  now += 1000;
  limiter.checkSource(source);
  assert.doesNotThrow(() =>
    new RateLimiter({ perSource: 0, perClient: 0 }).checkSource(sourceFromInput({ id: 'unlimited' })),
  );
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

test('TRACK_CLIENT_RATE_LIMIT limits each client address, whatever the source', async (t) => {
  const service = await startService({ clientRateLimit: 3 });
  t.after(() => service.close());
  await service.createSource();
  await service.createSource({ id: 'src-2' });
  const from = (remoteAddress: string, source: string) =>
    service.app.inject({
      method: 'POST',
      url: '/track',
      remoteAddress,
      payload: payload({ source: { id: source } }),
    });
  const burst = await Promise.all(
    Array.from({ length: 10 }, (_, i) => from('198.51.100.7', i % 2 ? 'src-1' : 'src-2')),
  );
  const limited = burst.filter((r) => r.statusCode === 429);
  assert.ok(limited.length >= 4, `${limited.length} of 10 limited`);
  assert.equal(limited[0]!.headers['retry-after'], '1');
  assert.match(limited[0]!.json().detail, /client address `198\.51\.100\.7`/);
  assert.equal((await from('198.51.100.8', 'src-1')).statusCode, 200, 'another address is not limited');
  // Unknown sources count too: one address cannot probe source ids without limit.
  const probes = await Promise.all(Array.from({ length: 10 }, (_, i) => from('198.51.100.9', `guess-${i}`)));
  assert.ok(probes.filter((r) => r.statusCode === 429).length >= 4);
});
