/** POST /track: request shape, source rules and response (docs/api.md #track-request, #source-rules, #track-response, #records). */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { payload, startService, type Service } from '../helpers.js';
import {
  allEvents,
  expectError,
  expectFieldError,
  expectStatus,
  ISO_UTC,
  read,
  statusOf,
  track,
  type Json,
} from './support.js';

describe('POST /track', () => {
  let service: Service;
  beforeEach(async () => {
    service = await startService();
    await service.createSource();
  });
  afterEach(() => service.close());

  test('answers 200 with profile id, session id, source consent, ux and response', async () => {
    const body = payload();
    const res = await track(service, body);
    assert.deepEqual(Object.keys(res).sort(), ['profile', 'response', 'session', 'source', 'ux']);
    assert.deepEqual(res.session, { id: (body.session as Json).id });
    assert.deepEqual(Object.keys(res.profile), ['id']);
    assert.equal(typeof res.profile.id, 'string');
    assert.ok(res.profile.id.length > 0);
    assert.deepEqual(res.source, { consent: false });
    assert.deepEqual(res.ux, []);
    assert.deepEqual(res.response, {});
  });

  test('source.consent is the source own consent flag', async () => {
    await service.createSource({ id: 'with-consent', consent: true });
    const res = await track(service, payload({ source: { id: 'with-consent' } }));
    assert.deepEqual(res.source, { consent: true });
  });

  test('several events in one request are all stored with the records of section 6', async () => {
    const body = payload({
      events: [
        { type: 'page-view', properties: { path: '/a' } },
        { type: 'purchase', properties: { price: 3 }, context: { page: 'cart' } },
        { type: 'no-properties' },
      ],
    });
    const res = await track(service, body);
    const stored = await allEvents(service);
    assert.equal(stored.length, 3);
    const byType = new Map(stored.map((e) => [e.type, e]));
    assert.deepEqual(byType.get('page-view')!.properties, { path: '/a' });
    assert.deepEqual(byType.get('purchase')!.properties, { price: 3 });
    assert.deepEqual(byType.get('purchase')!.context, { page: 'cart' });
    assert.deepEqual(byType.get('no-properties')!.properties, {});
    assert.deepEqual(byType.get('no-properties')!.context, {});
    for (const event of stored) {
      assert.deepEqual(Object.keys(event).sort(), [
        'context',
        'id',
        'metadata',
        'profile',
        'properties',
        'session',
        'source',
        'type',
      ]);
      assert.deepEqual(Object.keys(event.metadata).sort(), [
        'client_id',
        'ip',
        'profile_less',
        'status',
        'time',
      ]);
      assert.equal(event.metadata.client_id, null);
      assert.deepEqual(Object.keys(event.metadata.time).sort(), ['create', 'insert', 'source']);
      assert.equal(event.metadata.time.create, event.metadata.time.insert, 'no timestamp: the receipt time');
      assert.equal(event.metadata.time.source, 'server');
      assert.equal(typeof event.id, 'string');
      assert.deepEqual(event.source, { id: 'src-1' });
      assert.deepEqual(event.session, { id: res.session.id });
      assert.deepEqual(event.profile, { id: res.profile.id });
      assert.match(event.metadata.time.insert, ISO_UTC);
      assert.equal(event.metadata.profile_less, false);
      assert.equal(typeof event.metadata.status, 'string');
      assert.ok('ip' in event.metadata);
      assert.deepEqual(await read(service, `/event/${event.id}`), event);
    }
  });

  test('the stored session and profile have the record shapes of section 6', async () => {
    const res = await track(service, payload());
    const session = await read(service, `/session/${res.session.id}`);
    assert.deepEqual(Object.keys(session).sort(), [
      'app',
      'context',
      'device',
      'id',
      'metadata',
      'os',
      'profile',
      'properties',
    ]);
    // What the request said of its device: the test client's User-Agent (`lightMyRequest`) reads as
    // a bot's, and a loopback address has no country.
    assert.deepEqual(session.device, { type: 'bot', geo: { country: { code: null } } });
    assert.deepEqual(session.os, { name: null, version: null });
    assert.deepEqual(session.app, { name: null, version: null, bot: true });
    assert.equal(session.id, res.session.id);
    assert.deepEqual(session.profile, { id: res.profile.id });
    assert.match(session.metadata.time.insert, ISO_UTC);
    assert.match(session.metadata.time.update, ISO_UTC);
    assert.deepEqual(session.context, {});
    assert.deepEqual(session.properties, {});

    const profile = await read(service, `/profile/${res.profile.id}`);
    assert.deepEqual(Object.keys(profile).sort(), [
      'consents',
      'id',
      'interests',
      'metadata',
      'segments',
      'stats',
      'traits',
    ]);
    assert.equal(profile.id, res.profile.id);
    assert.match(profile.metadata.time.insert, ISO_UTC);
    assert.match(profile.metadata.time.update, ISO_UTC);
    assert.equal(profile.metadata.time.visit.last, null);
    assert.match(profile.metadata.time.visit.current, ISO_UTC);
    assert.equal(profile.metadata.time.visit.count, 1);
    assert.deepEqual(profile.stats, { visits: 1 });
    assert.deepEqual(profile.traits, { public: {}, private: {} });
    assert.deepEqual(profile.consents, {});
    assert.deepEqual(profile.segments, []);
    assert.deepEqual(profile.interests, {});
  });

  test('an unknown source is 401 "Invalid event source `<id>`" and stores nothing', async () => {
    const body = payload({ source: { id: 'no-such-source' } });
    const res = await service.post('/track', body);
    expectError(res, 401);
    assert.deepEqual(res.json(), { detail: 'Invalid event source `no-such-source`' });
    assert.equal(await statusOf(service, `/session/${(body.session as Json).id}`), 404);
    assert.equal((await allEvents(service)).length, 0);
  });

  test('a disabled source is 401 "Event source disabled." and stores nothing', async () => {
    await service.createSource({ id: 'off', enabled: false });
    const body = payload({ source: { id: 'off' } });
    const res = await service.post('/track', body);
    expectError(res, 401);
    assert.deepEqual(res.json(), { detail: 'Event source disabled.' });
    assert.equal(await statusOf(service, `/session/${(body.session as Json).id}`), 404);
    assert.equal((await allEvents(service)).length, 0);
  });

  test('disabling, re-enabling and deleting a source take effect on the next request', async () => {
    await track(service, payload());
    await service.createSource({ enabled: false });
    assert.deepEqual((await service.post('/track', payload())).json(), { detail: 'Event source disabled.' });
    await service.createSource({ enabled: true });
    await track(service, payload());
    expectStatus(await service.manage('DELETE', '/event-source/src-1'), 200);
    const res = await service.post('/track', payload());
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json(), { detail: 'Invalid event source `src-1`' });
  });

  test('a transitional source stores nothing and gives a fresh profile id each time', async () => {
    await service.createSource({ id: 'transit', transitional: true });
    const body = payload({ source: { id: 'transit' }, context: { a: 1 } });
    const first = await track(service, body);
    const second = await track(service, body);
    const third = await track(service, { ...body, profile: { id: first.profile.id } });
    assert.equal(first.session.id, (body.session as Json).id);
    const ids = new Set([first.profile.id, second.profile.id, third.profile.id]);
    assert.equal(ids.size, 3);
    for (const id of ids) assert.equal(await statusOf(service, `/profile/${id}`), 404);
    assert.equal(await statusOf(service, `/session/${first.session.id}`), 404);
    assert.equal((await allEvents(service)).length, 0);
  });

  test('a transitional source reports nothing saved in debugging', async () => {
    await service.createSource({ id: 'transit', transitional: true });
    const res = await track(service, payload({ source: { id: 'transit' }, options: { debugger: true } }));
    assert.equal(res.debugging.session.saved, 0);
    assert.equal(res.debugging.profile.saved, 0);
    assert.equal(res.debugging.events.saved, 0);
    assert.deepEqual(res.debugging.events.ids, []);
  });

  test('options.profile=true returns the whole profile without traits.private', async () => {
    const res = await track(service, payload({ options: { profile: true } }));
    const stored = await read(service, `/profile/${res.profile.id}`);
    assert.ok(!('private' in res.profile.traits), 'traits.private must not be returned');
    const { traits: storedTraits, ...storedRest } = stored;
    const { traits, ...rest } = res.profile;
    assert.deepEqual(rest, storedRest);
    assert.deepEqual(traits, { public: storedTraits.public });
  });

  test('options.profile=true returns the profile as stored after this request (its new visit included)', async () => {
    const first = await track(service, payload());
    const res = await track(service, payload({ profile: first.profile, options: { profile: true } }));
    assert.equal(res.profile.id, first.profile.id);
    assert.equal(res.profile.stats.visits, 2);
    const stored = await read(service, `/profile/${first.profile.id}`);
    assert.deepEqual(res.profile.metadata, stored.metadata);
    assert.deepEqual(res.profile.stats, stored.stats);
  });

  test('options.profile=false (the default) returns only the profile id', async () => {
    const res = await track(service, payload({ options: { profile: false } }));
    assert.deepEqual(Object.keys(res.profile), ['id']);
  });

  test('a source with returns_profile false ignores options.profile', async () => {
    await service.createSource({ id: 'quiet', returns_profile: false });
    const res = await track(service, payload({ source: { id: 'quiet' }, options: { profile: true } }));
    assert.deepEqual(Object.keys(res.profile), ['id']);
    assert.equal(await statusOf(service, `/profile/${res.profile.id}`), 200);
  });

  test('missing or malformed required fields are 422 naming the field path', async () => {
    const cases: [Json, (string | number)[]][] = [
      [{ ...payload(), session: undefined }, ['session']],
      [{ ...payload(), session: {} }, ['session', 'id']],
      [{ ...payload(), session: { id: '' } }, ['session', 'id']],
      [{ ...payload(), session: { id: 'x'.repeat(129) } }, ['session', 'id']],
      [{ ...payload(), session: { id: 12 } }, ['session', 'id']],
      [{ ...payload(), source: undefined }, ['source']],
      [{ ...payload(), source: { id: 5 } }, ['source', 'id']],
      [{ ...payload(), events: undefined }, ['events']],
      [{ ...payload(), events: 'page-view' }, ['events']],
      [{ ...payload(), events: [{ properties: {} }] }, ['events', 0, 'type']],
      [{ ...payload(), events: [{ type: '' }] }, ['events', 0, 'type']],
      [{ ...payload(), events: [{ type: 'ok' }, { type: 'x'.repeat(256) }] }, ['events', 1, 'type']],
      [{ ...payload(), events: [{ type: 'a', properties: [1] }] }, ['events', 0, 'properties']],
      [{ ...payload(), events: [{ type: 'a', context: 'x' }] }, ['events', 0, 'context']],
      [{ ...payload(), context: [] }, ['context']],
      [{ ...payload(), properties: 'x' }, ['properties']],
      [{ ...payload(), profile: 'abc' }, ['profile']],
      [{ ...payload(), profile: { id: 7 } }, ['profile', 'id']],
    ];
    for (const [body, path] of cases) {
      expectFieldError(await service.post('/track', body), path);
    }
    assert.equal((await allEvents(service)).length, 0);
  });

  test('an empty events list is a 422', async () => {
    expectError(await service.post('/track', payload({ events: [] })), 422);
  });

  test('limits of lengths: session id of 128 and event type of 255 characters are accepted', async () => {
    const session = { id: 's'.repeat(128) };
    const res = await track(service, payload({ session, events: [{ type: 't'.repeat(255) }] }));
    assert.equal(res.session.id, session.id);
    const [event] = await allEvents(service);
    assert.equal(event!.type, 't'.repeat(255));
  });

  test('a request refused for its source adds nothing to a known session', async () => {
    const first = await track(service, payload());
    const res = await service.post('/track', {
      ...payload({ source: { id: 'nope' } }),
      session: first.session,
    });
    assert.equal(res.statusCode, 401);
    assert.equal((await allEvents(service)).length, 1);
  });
});
