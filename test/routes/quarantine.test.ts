import assert from 'node:assert/strict';
import { describe, test, beforeEach, afterEach } from 'node:test';
import { payload, startService, type Service } from '../helpers.js';

const priceRequired = {
  event_type: 'purchase',
  validation: { json_schema: { 'event@properties': { type: 'object', required: ['price'] } } },
};
const priceOptional = {
  event_type: 'purchase',
  validation: { json_schema: { 'event@properties': { type: 'object' } } },
};

describe('rejected-request quarantine', () => {
  let service: Service;
  beforeEach(async () => {
    service = await startService();
    await service.createSource();
    await service.createSource({ id: 'src-2' });
    await service.manage('POST', '/event/management', priceRequired);
  });
  afterEach(() => service.close());

  test('a rejected /track is kept with time, source, session, types, failures and the payload', async () => {
    const body = payload({
      session: { id: 'sess-q' },
      events: [{ type: 'view' }, { type: 'purchase', properties: { sku: 'a' } }],
    });
    const res = await service.post('/track?profile_less=true', body);
    assert.equal(res.statusCode, 406);
    const list = (await service.get('/event/rejected')).json();
    assert.equal(list.result.length, 1);
    const record = list.result[0];
    assert.equal(record.endpoint, 'track');
    assert.equal(record.source_id, 'src-1');
    assert.equal(record.session_id, 'sess-q');
    assert.deepEqual(record.event_types, ['view', 'purchase']);
    assert.equal(record.detail, res.json().detail);
    assert.deepEqual(record.errors, res.json().errors);
    assert.deepEqual(record.request.body, body);
    assert.equal(record.request.profile_less, true);
    assert.ok(Date.now() - Date.parse(record.time) < 60_000);
    assert.deepEqual((await service.get(`/event/rejected/${record.id}`)).json(), record);
  });

  test('filters by event type and source, pages without gaps or duplicates', async () => {
    for (let i = 0; i < 5; i++) {
      await service.post(
        '/track',
        payload({ source: { id: i % 2 ? 'src-2' : 'src-1' }, events: [{ type: 'purchase' }] }),
      );
    }
    await service.post('/collect/purchase/src-2', { sku: 1 });
    const all = (await service.get('/event/rejected?limit=1000')).json().result as {
      id: string;
      time: string;
    }[];
    assert.equal(all.length, 6);
    const sorted = [...all].sort((a, b) =>
      a.time === b.time ? b.id.localeCompare(a.id) : b.time.localeCompare(a.time),
    );
    assert.deepEqual(all, sorted, 'newest first');
    assert.equal((await service.get('/event/rejected?source_id=src-2')).json().result.length, 3);
    assert.equal((await service.get('/event/rejected?event_type=purchase')).json().result.length, 6);
    assert.equal((await service.get('/event/rejected?event_type=view')).json().result.length, 0);

    const seen: string[] = [];
    let url = '/event/rejected?limit=2';
    for (;;) {
      const page = (await service.get(url)).json();
      seen.push(...page.result.map((r: { id: string }) => r.id));
      if (!page.next) break;
      url = `/event/rejected?limit=2&cursor=${encodeURIComponent(page.next)}`;
    }
    assert.deepEqual(
      seen,
      all.map((r) => r.id),
    );
    const rejectedCursor = (await service.get('/event/rejected?limit=1')).json().next as string;
    assert.equal(
      (await service.get(`/events?cursor=${encodeURIComponent(rejectedCursor)}`)).statusCode,
      422,
      'a cursor of one listing is not accepted by another',
    );
    assert.equal((await service.get('/event/rejected?cursor=forged.cursor')).statusCode, 422);
  });

  test('replay answers 406 while the schema still refuses, then 200 like /track once fixed', async () => {
    const body = payload({ events: [{ type: 'purchase', properties: {} }] });
    await service.post('/track', body);
    const [record] = (await service.get('/event/rejected')).json().result;

    const again = await service.manage('POST', `/event/rejected/${record.id}/replay`);
    assert.equal(again.statusCode, 406);
    assert.equal(again.json().detail, record.detail);
    assert.equal((await service.get('/event/rejected')).json().result.length, 1, 'kept, not duplicated');

    await service.manage('POST', '/event/management', priceOptional);
    const replayed = await service.manage('POST', `/event/rejected/${record.id}/replay`);
    assert.equal(replayed.statusCode, 200, replayed.body);
    const answer = replayed.json();
    assert.equal(answer.session.id, (body.session as { id: string }).id);
    assert.ok(answer.profile.id);
    assert.deepEqual(answer.ux, []);
    assert.equal(
      (await service.get(`/event/rejected/${record.id}`)).statusCode,
      404,
      'removed once accepted',
    );
    const events = (await service.get(`/events?session_id=${answer.session.id}`)).json().result;
    assert.equal(events.length, 1);
    assert.equal(events[0].profile.id, answer.profile.id);
  });

  test('a rejected /collect is replayed through /collect', async () => {
    await service.post('/collect/purchase/src-2', { sku: 'b' });
    const [record] = (await service.get('/event/rejected')).json().result;
    assert.equal(record.endpoint, 'collect');
    assert.equal(record.request.event_type, 'purchase');
    assert.deepEqual(record.request.body, { sku: 'b' });
    await service.manage('POST', '/event/management', priceOptional);
    const replayed = await service.manage('POST', `/event/rejected/${record.id}/replay`);
    assert.equal(replayed.statusCode, 200);
    const stored = (await service.get(`/event/${replayed.json().event.id}`)).json();
    assert.deepEqual(stored.properties, { sku: 'b' });
    assert.equal(stored.source.id, 'src-2');
    assert.equal(stored.session, null);
  });

  test('requests refused for other reasons are not quarantined', async () => {
    await service.post('/track', payload({ source: { id: 'unknown' }, events: [{ type: 'purchase' }] }));
    await service.post('/track', payload({ events: [{ type: '' }] }));
    assert.equal((await service.get('/event/rejected')).json().result.length, 0);
  });

  test('the quarantine needs the token; unknown ids are 404', async () => {
    for (const [method, url] of [
      ['GET', '/event/rejected'],
      ['GET', '/event/rejected/x'],
      ['POST', '/event/rejected/x/replay'],
    ] as const) {
      assert.equal((await service.app.inject({ method, url })).statusCode, 401, url);
    }
    assert.equal((await service.get('/event/rejected/nope')).statusCode, 404);
    assert.equal((await service.manage('POST', '/event/rejected/nope/replay')).statusCode, 404);
  });
});
