/**
 * Receivers that misbehave, and addresses that lead nowhere (docs/api.md#delivery): no crash, no 500,
 * no connections left behind, and /track answers as usual meanwhile.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { expectStatus, startService, type Json, type Service } from '../helpers.js';
import { startReceiver, until, type Behaviour } from '../support/receiver.js';

const settings = { deliveryTimeoutMs: 400, deliveryBackoffMinMs: 20, deliveryBackoffMaxMs: 100 };

async function setUp(t: import('node:test').TestContext) {
  const receiver = await startReceiver();
  const service = await startService(settings);
  t.after(async () => {
    await service.close();
    await receiver.close();
  });
  await service.createSource({ id: 'web' });
  return { service, receiver };
}

async function track(service: Service, n = 1): Promise<void> {
  for (let i = 0; i < n; i++) {
    const res = await service.post('/track', {
      source: { id: 'web' },
      session: { id: `s-${i}` },
      events: [{ type: 'page-view' }],
    });
    expectStatus(res, 200);
  }
}

const status = async (service: Service, id: string) =>
  expectStatus(await service.get(`/destination/${id}`), 200).status as Json;

const cases: [string, Behaviour, RegExp, 'retry' | 'failed'][] = [
  ['never answers', 'hang', /^no answer within 0\.4 s$/, 'retry'],
  ['answers 10 MB', { huge: 10 * 1024 * 1024 }, /^HTTP 500: x{200}$/, 'retry'],
  ['answers byte by byte', { slowBytes: 100, status: 200 }, /^no answer within 0\.4 s$/, 'retry'],
  ['redirects', { status: 302, headers: { location: 'http://127.0.0.1:9/' } }, /^HTTP 302$/, 'failed'],
  ['closes the connection', 'close', /socket hang up|ECONNRESET/, 'retry'],
];

for (const [name, behaviour, error, outcome] of cases) {
  test(`a receiver that ${name}: the error is recorded, nothing breaks`, async (t) => {
    const { service, receiver } = await setUp(t);
    receiver.behave = () => behaviour;
    await service.manage('POST', '/destination', { id: 'd', url: receiver.url });
    await track(service);
    await until(async () => {
      const s = await status(service, 'd');
      return outcome === 'failed' ? s.failed === 1 : receiver.received.length >= 3;
    }, 'attempts made');
    const s = await status(service, 'd');
    assert.match(String(s.last_error), error);
    assert.ok(s.failing_since);
    await track(service, 20);
    if (outcome === 'retry') assert.equal((await status(service, 'd')).pending, 21);
    assert.ok(receiver.openSockets() <= 3, `${receiver.openSockets()} connections open`);
    // Redirects are not followed.
    assert.ok(receiver.received.every((r) => r.headers.host === new URL(receiver.url).host));
  });
}

test('an address that does not resolve or refuses connections is retried, not fatal', async (t) => {
  const { service } = await setUp(t);
  await service.manage('POST', '/destination', { id: 'nowhere', url: 'http://nowhere.invalid/hook' });
  await service.manage('POST', '/destination', { id: 'refused', url: 'http://127.0.0.1:9/hook' });
  await track(service, 3);
  await until(async () => (await status(service, 'nowhere')).last_error !== null, 'an error recorded');
  await until(async () => (await status(service, 'refused')).last_error !== null, 'an error recorded');
  assert.match(String((await status(service, 'nowhere')).last_error), /ENOTFOUND|EAI_AGAIN|no answer/);
  assert.match(String((await status(service, 'refused')).last_error), /ECONNREFUSED/);
  assert.equal((await status(service, 'refused')).pending, 3);
});

test('a destination deleted while its batch is in flight: no crash, /track unaffected', async (t) => {
  const { service, receiver } = await setUp(t);
  receiver.behave = () => 'hang';
  await service.manage('POST', '/destination', { id: 'd', url: receiver.url });
  await track(service);
  await until(() => receiver.received.length >= 1, 'in flight');
  expectStatus(await service.manage('DELETE', '/destination/d'), 200);
  await track(service, 5);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  expectStatus(await service.get('/destination/d'), 404);
  const attempts = receiver.received.length;
  await track(service, 5);
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.equal(receiver.received.length, attempts, 'nothing sent once deleted');
  // Recreated, it starts afresh: only what is stored from then on.
  receiver.behave = () => ({ status: 200 });
  await service.manage('POST', '/destination', { id: 'd', url: receiver.url });
  await track(service, 2);
  await until(() => receiver.deliveredIds().length === 2, 'the new destination delivers');
});

/** 8 clients sending 60 /track requests each; the latencies, sorted. */
async function trackLoad(service: Service, tag: string): Promise<number[]> {
  const times: number[] = [];
  await Promise.all(
    Array.from({ length: 8 }, async (_, c) => {
      for (let i = 0; i < 60; i++) {
        const started = performance.now();
        const res = await service.post('/track', {
          source: { id: 'web' },
          session: { id: `${tag}-${c}` },
          events: [{ type: 'page-view' }],
        });
        times.push(performance.now() - started);
        expectStatus(res, 200);
      }
    }),
  );
  return times.sort((a, b) => a - b);
}

const p99 = (times: number[]) => times[Math.floor(times.length * 0.99)]!.toFixed(1);

test('/track while a destination hangs: every request answered (p99 reported)', async (t) => {
  const { service, receiver } = await setUp(t);
  const baseline = await trackLoad(service, 'baseline');
  receiver.behave = () => 'hang';
  await service.manage('POST', '/destination', { id: 'd', url: receiver.url, batch_size: 1 });
  const heapBefore = process.memoryUsage().heapUsed;
  const hanging = await trackLoad(service, 'hanging');
  t.diagnostic(
    `/track p99 ${p99(baseline)} ms without a destination, ${p99(hanging)} ms while one hangs ` +
      `(${hanging.length} requests each); heap ${(heapBefore / 1e6).toFixed(1)} -> ` +
      `${(process.memoryUsage().heapUsed / 1e6).toFixed(1)} MB`,
  );
  assert.equal((await status(service, 'd')).pending, 480);
  assert.ok(receiver.openSockets() <= 3, `${receiver.openSockets()} connections open`);
});

test('hostile destination records: prototype keys, NUL, long values; stored as data, delivered', async (t) => {
  const { service, receiver } = await setUp(t);
  const body = JSON.stringify({
    id: 'hostile',
    url: receiver.url,
    name: 'a\u0000b\ud800\u{1F600}'.repeat(20),
    event_types: ['__proto__', 'constructor', 'page-view'],
    source_ids: ['web', 'x'.repeat(128)],
    headers: Object.fromEntries([
      ['__proto__', 'p'],
      ['constructor', 'c'],
      ...Array.from({ length: 3 }, (_, i) => [`x-h${i}`, 'v'.repeat(4096)]),
    ]),
  });
  const saved = expectStatus(await service.manage('POST', '/destination', body), 200);
  assert.equal(Object.getPrototypeOf(saved.headers), Object.prototype);
  assert.equal(saved.headers.__proto__, 'p');
  const read = expectStatus(await service.get('/destination/hostile'), 200);
  assert.equal(read.name, saved.name);
  assert.deepEqual(read.headers, saved.headers);
  await track(service, 2);
  await until(() => receiver.deliveredIds().length === 2, 'delivered');
  assert.equal(receiver.received[0]!.headers.constructor, 'c');
  assert.equal(receiver.received[0]!.headers['x-h2'], 'v'.repeat(4096));
  for (const bad of [
    '{"url": "http://x/", "headers": {"a": "b\\u0000"}}',
    '{"url": "http://x/", "id": "a\\u0000"}',
    '{"url": "http://x/\\u0000"}',
    `{"url": "http://x/", "headers": ${JSON.stringify(Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`h${i}`, 'v'])))}}`,
    '{"url": "http://x/", "batch_size": 1e400}',
    '[]',
    'null',
  ]) {
    const res = await service.manage('POST', '/destination', bad);
    assert.ok([400, 422].includes(res.statusCode), `${bad.slice(0, 60)}: ${res.statusCode} ${res.body}`);
    assert.ok(res.json().detail);
  }
  assert.equal(expectStatus(await service.get('/destinations'), 200).total, 1);
});
