/** Real client bodies (test/fixtures/tracker, copied from the shared fixtures) work unchanged (docs/api.md #post-track). */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { startService, type Service } from '../helpers.js';
import { allEvents, expectStatus, read, type Json } from './support.js';

const FIXTURES = ['tracker-first-visit.json', 'python-sdk.json'];

function fixture(name: string): string {
  return readFileSync(new URL(`../fixtures/tracker/${name}`, import.meta.url), 'utf8');
}

/** Sends the file as the client does: no Content-Type, the bytes as recorded. */
async function send(service: Service, body: string): Promise<Json> {
  return expectStatus(await service.app.inject({ method: 'POST', url: '/track', payload: body }), 200);
}

describe('tracker fixtures', () => {
  let service: Service;
  beforeEach(async () => {
    service = await startService();
    await service.createSource();
  });
  afterEach(() => service.close());

  for (const name of FIXTURES) {
    test(`${name}: 200 with profile.id and session.id, events stored`, async () => {
      const body = fixture(name);
      const sent = JSON.parse(body) as Json;
      const res = await send(service, body);
      assert.equal(typeof res.profile?.id, 'string');
      assert.ok(res.profile.id.length > 0);
      assert.deepEqual(res.session, { id: sent.session.id });
      assert.deepEqual(res.source, { consent: false });
      assert.deepEqual(res.ux, []);
      assert.deepEqual(res.response, {});
      const stored = await allEvents(service, { session_id: sent.session.id });
      assert.deepEqual(stored.map((e) => e.type).sort(), (sent.events as Json[]).map((e) => e.type).sort());
      for (const event of stored) assert.deepEqual(event.profile, { id: res.profile.id });
      assert.deepEqual((await read(service, `/session/${sent.session.id}`)).profile, { id: res.profile.id });
    });

    test(`${name}: the returned profile id sent back with the same session keeps the profile`, async () => {
      const sent = JSON.parse(fixture(name)) as Json;
      const first = await send(service, fixture(name));
      const again = await send(service, JSON.stringify({ ...sent, profile: { id: first.profile.id } }));
      assert.equal(again.profile.id, first.profile.id);
      assert.equal((await read(service, `/profile/${first.profile.id}`)).stats.visits, 1);

      const nextVisit = await send(
        service,
        JSON.stringify({
          ...sent,
          session: { id: `${sent.session.id}-2` },
          profile: { id: first.profile.id },
        }),
      );
      assert.equal(nextVisit.profile.id, first.profile.id);
      assert.equal((await read(service, `/profile/${first.profile.id}`)).stats.visits, 2);
    });

    test(`${name}: accepted with every Content-Type a client may send`, async () => {
      for (const type of ['application/json', 'text/plain;charset=UTF-8']) {
        const res = await service.app.inject({
          method: 'POST',
          url: '/track',
          payload: fixture(name),
          headers: { 'content-type': type },
        });
        expectStatus(res, 200);
      }
    });
  }

  test('the browser tracker first visit: full profile, debugging, contexts merged per event', async () => {
    const sent = JSON.parse(fixture('tracker-first-visit.json')) as Json;
    const res = await send(service, fixture('tracker-first-visit.json'));
    // options.profile: the whole profile without traits.private
    assert.equal(res.profile.stats.visits, 1);
    assert.ok(!('private' in res.profile.traits));
    // options.debugger
    assert.equal(res.debugging.events.saved, 2);
    assert.equal(res.debugging.session.saved, 1);
    assert.equal(res.debugging.profile.saved, 1);
    const [view] = await allEvents(service, { type: 'page-view' });
    assert.deepEqual(view!.context, { ...sent.context, ...sent.events[0].context });
    assert.deepEqual(view!.properties, { a: 1 });
    const [order] = await allEvents(service, { type: 'purchase-order' });
    assert.deepEqual(order!.properties, { price: 13.45 });
    assert.deepEqual((await read(service, `/session/${sent.session.id}`)).context, sent.context);
  });

  test('the Python SDK body: its extra metadata is ignored, only the profile id returned', async () => {
    const res = await send(service, fixture('python-sdk.json'));
    assert.deepEqual(Object.keys(res.profile), ['id']);
    assert.ok(!('debugging' in res));
    const [event] = await allEvents(service);
    assert.deepEqual(event!.properties, { data: 1 });
    assert.notEqual(event!.metadata.time.insert, '2022-02-10 10:37:06.123456');
  });
});
