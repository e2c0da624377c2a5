/** POST /collect/{event_type}/{source_id} (docs/api.md #post-collect). */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { startService, type Service } from '../helpers.js';
import { allEvents, expectError, expectStatus, ISO_UTC, read, statusOf } from './support.js';

describe('POST /collect/{event_type}/{source_id}', () => {
  let service: Service;
  beforeEach(async () => {
    service = await startService();
    await service.createSource();
  });
  afterEach(() => service.close());

  test('stores one profile-less event whose properties are the body', async () => {
    const res = await service.post('/collect/coupon-received/src-1', {
      code: 'X1',
      amount: 5,
      nested: { a: [1] },
    });
    const body = expectStatus(res, 200);
    assert.deepEqual(Object.keys(body).sort(), ['event', 'source']);
    assert.deepEqual(body.source, { consent: false });
    assert.equal(typeof body.event.id, 'string');
    const event = await read(service, `/event/${body.event.id}`);
    assert.equal(event.id, body.event.id);
    assert.equal(event.type, 'coupon-received');
    assert.deepEqual(event.properties, { code: 'X1', amount: 5, nested: { a: [1] } });
    assert.deepEqual(event.source, { id: 'src-1' });
    assert.equal(event.session, null);
    assert.equal(event.profile, null);
    assert.equal(event.metadata.profile_less, true);
    assert.match(event.metadata.time.insert, ISO_UTC);
    assert.equal((await allEvents(service)).length, 1);
  });

  test('creates no session and no profile', async () => {
    const res = expectStatus(await service.post('/collect/a/src-1', { x: 1 }), 200);
    const event = await read(service, `/event/${res.event.id}`);
    assert.equal(event.session, null);
    assert.equal(event.profile, null);
    // No profile id is ever handed out, and every event stays unattached.
    assert.ok(!('profile' in res));
    assert.ok(!('session' in res));
  });

  test('an empty body counts as {}', async () => {
    const res = await service.app.inject({ method: 'POST', url: '/collect/empty/src-1' });
    const body = expectStatus(res, 200);
    assert.deepEqual((await read(service, `/event/${body.event.id}`)).properties, {});
    const withType = await service.app.inject({
      method: 'POST',
      url: '/collect/empty/src-1',
      headers: { 'content-type': 'application/json' },
      payload: '',
    });
    expectStatus(withType, 200);
  });

  test('a JSON body that is not an object is a 422 and stores nothing', async () => {
    for (const body of ['[1,2]', '"text"', '12', 'null', 'true']) {
      expectError(await service.post('/collect/a/src-1', body), 422);
    }
    assert.equal((await allEvents(service)).length, 0);
  });

  test('a body that does not parse is a 400', async () => {
    expectError(await service.post('/collect/a/src-1', '{"a":'), 400);
  });

  test('source rules: unknown is 401 with its id, disabled is 401, both store nothing', async () => {
    const unknown = await service.post('/collect/a/nope', { x: 1 });
    expectError(unknown, 401);
    assert.deepEqual(unknown.json(), { detail: 'Invalid event source `nope`' });
    await service.createSource({ id: 'off', enabled: false });
    const disabled = await service.post('/collect/a/off', { x: 1 });
    expectError(disabled, 401);
    assert.deepEqual(disabled.json(), { detail: 'Event source disabled.' });
    assert.equal((await allEvents(service)).length, 0);
  });

  test('the source consent flag is returned', async () => {
    await service.createSource({ id: 'consenting', consent: true });
    const body = expectStatus(await service.post('/collect/a/consenting', {}), 200);
    assert.deepEqual(body.source, { consent: true });
  });

  test('a transitional source stores nothing', async () => {
    await service.createSource({ id: 'transit', transitional: true });
    const body = expectStatus(await service.post('/collect/a/transit', { x: 1 }), 200);
    assert.equal(typeof body.event.id, 'string');
    assert.equal(await statusOf(service, `/event/${body.event.id}`), 404);
    assert.equal((await allEvents(service)).length, 0);
  });

  test('the event type is taken from the path, decoded and exact', async () => {
    const a = expectStatus(await service.post('/collect/Coupon%20Received/src-1', {}), 200);
    assert.equal((await read(service, `/event/${a.event.id}`)).type, 'Coupon Received');
    const b = expectStatus(await service.post('/collect/coupon-received/src-1', {}), 200);
    assert.equal((await read(service, `/event/${b.event.id}`)).type, 'coupon-received');
  });

  test('each call stores a new event with its own id', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 5; i++)
      ids.add(expectStatus(await service.post('/collect/a/src-1', { i }), 200).event.id);
    assert.equal(ids.size, 5);
    const stored = await allEvents(service, { type: 'a', source_id: 'src-1' });
    assert.deepEqual(new Set(stored.map((e) => e.id)), ids);
  });
});
