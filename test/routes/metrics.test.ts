import assert from 'node:assert/strict';
import { test } from 'node:test';
import { payload, startService } from '../helpers.js';

function value(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

test('/metrics counts requests, events by outcome, commits and the queue; it needs the token', async (t) => {
  const service = await startService();
  t.after(() => service.close());
  await service.createSource();
  await service.manage('POST', '/event/management', {
    event_type: 'purchase',
    validation: { json_schema: { 'event@properties': { type: 'object', required: ['price'] } } },
  });
  await service.post('/track', payload({ events: [{ type: 'a' }, { type: 'b', options: { save: false } }] }));
  await service.post('/track', payload({ events: [{ type: 'purchase' }, { type: 'a' }] }));
  await service.post('/track', payload({ source: { id: 'nope' } }));
  await service.post('/collect/a/src-1', {});

  assert.equal((await service.app.inject({ method: 'GET', url: '/metrics' })).statusCode, 401);
  const res = await service.get('/metrics');
  assert.equal(res.statusCode, 200);
  assert.match(String(res.headers['content-type']), /^text\/plain/);
  const text = res.body;
  assert.equal(value(text, 'collector_events_total{outcome="accepted",reason=""}'), 3);
  assert.equal(value(text, 'collector_events_total{outcome="stored",reason=""}'), 2);
  assert.equal(value(text, 'collector_events_total{outcome="rejected",reason="validation"}'), 2);
  assert.equal(value(text, 'collector_events_total{outcome="rejected",reason="source"}'), 1);
  assert.equal(value(text, 'collector_http_requests_total{route="/track",method="POST",status="200"}'), 1);
  assert.equal(value(text, 'collector_http_requests_total{route="/track",method="POST",status="406"}'), 1);
  assert.equal(value(text, 'collector_http_requests_total{route="/track",method="POST",status="401"}'), 1);
  assert.equal(value(text, 'collector_commit_duration_seconds_count'), 2);
  assert.equal(value(text, 'collector_write_queue_depth'), 0);
});

test('the documentation pages carry security headers; /track does not pay for them', async (t) => {
  const service = await startService();
  t.after(() => service.close());
  await service.createSource();
  for (const url of ['/docs', '/docs/json']) {
    const res = await service.app.inject({ method: 'GET', url });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-security-policy']), /default-src 'self'/);
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.ok(res.headers['x-frame-options']);
  }
  const track = await service.post('/track', payload());
  assert.equal(track.headers['content-security-policy'], undefined);
});

test('/metrics counts delivered events and batches by outcome, pending per destination, latency', async (t) => {
  const { startReceiver, until } = await import('../support/receiver.js');
  const receiver = await startReceiver();
  const service = await startService({ deliveryBackoffMinMs: 20, deliveryBackoffMaxMs: 50 });
  t.after(async () => {
    await service.close();
    await receiver.close();
  });
  await service.createSource();
  receiver.behave = (_r, i) => (i === 0 ? { status: 503 } : { status: 200 });
  await service.manage('POST', '/destination', { id: 'd1', url: receiver.url });
  await service.manage('POST', '/destination', { id: 'paused', url: receiver.url, enabled: false });
  await service.post('/track', payload({ events: [{ type: 'a' }, { type: 'b' }] }));
  await until(() => receiver.deliveredIds().length === 2, 'delivered');
  await until(async () => {
    const text = (await service.get('/metrics')).body;
    return value(text, 'collector_delivery_events_total{destination="d1"}') === 2;
  }, 'counted');
  const text = (await service.get('/metrics')).body;
  assert.equal(value(text, 'collector_delivery_batches_total{destination="d1",outcome="retry"}'), 1);
  assert.equal(value(text, 'collector_delivery_batches_total{destination="d1",outcome="delivered"}'), 1);
  assert.equal(value(text, 'collector_delivery_pending{destination="d1"}'), 0);
  assert.equal(value(text, 'collector_delivery_pending{destination="paused"}'), 2);
  assert.equal(value(text, 'collector_delivery_latency_seconds_count'), 2);
});
