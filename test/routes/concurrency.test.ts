/** Concurrent requests (docs/api.md #profile-and-session): one session and one profile per new session id, exact visits. */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { payload, startService, type Service } from '../helpers.js';
import { allEvents, read, statusOf, track, type Json } from './support.js';

const N = 20;
const fresh = () => `session-${Math.random().toString(36).slice(2)}`;

describe('one process', () => {
  let service: Service;
  beforeEach(async () => {
    service = await startService();
    await service.createSource();
  });
  afterEach(() => service.close());

  test(`${N} concurrent requests with the same new session id resolve to one session and one profile`, async () => {
    const sid = fresh();
    const results = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        track(
          service,
          payload({
            session: { id: sid },
            events: [{ type: 'c', properties: { i } }],
            options: { debugger: true },
          }),
        ),
      ),
    );
    const profiles = new Set(results.map((r) => r.profile.id));
    assert.equal(profiles.size, 1, `profiles: ${[...profiles]}`);
    const [pid] = profiles;
    assert.deepEqual((await read(service, `/session/${sid}`)).profile, { id: pid });
    const profile = await read(service, `/profile/${pid}`);
    assert.equal(profile.stats.visits, 1);
    assert.equal(profile.metadata.time.visit.count, 1);
    const events = await allEvents(service);
    assert.equal(events.length, N);
    for (const event of events) assert.deepEqual(event.profile, { id: pid });
    assert.equal(
      sum(results, (r) => r.debugging.profile.saved),
      1,
      'one request created the profile',
    );
    assert.equal(
      sum(results, (r) => r.debugging.session.saved),
      1,
      'one request created the session',
    );
  });

  test('concurrent requests with the same new session id and a known profile count one visit', async () => {
    const known = await track(service, payload());
    const sid = fresh();
    const results = await Promise.all(
      Array.from({ length: N }, () =>
        track(service, payload({ session: { id: sid }, profile: known.profile })),
      ),
    );
    assert.ok(results.every((r) => r.profile.id === known.profile.id));
    assert.equal((await read(service, `/profile/${known.profile.id}`)).stats.visits, 2);
  });

  test('with saveSession false every concurrent request is a first visit', async () => {
    const sid = fresh();
    const results = await Promise.all(
      Array.from({ length: N }, () =>
        track(service, payload({ session: { id: sid }, options: { saveSession: false } })),
      ),
    );
    const profiles = new Set(results.map((r) => r.profile.id as string));
    assert.equal(profiles.size, N);
    for (const pid of profiles) assert.equal((await read(service, `/profile/${pid}`)).stats.visits, 1);
    assert.equal(await statusOf(service, `/session/${sid}`), 404);
  });

  test('with saveSession false and a known profile every concurrent request is a counted visit', async () => {
    const known = await track(service, payload());
    const sid = fresh();
    await Promise.all(
      Array.from({ length: N }, () =>
        track(
          service,
          payload({ session: { id: sid }, profile: known.profile, options: { saveSession: false } }),
        ),
      ),
    );
    const profile = await read(service, `/profile/${known.profile.id}`);
    assert.equal(profile.stats.visits, 1 + N);
    assert.equal(profile.metadata.time.visit.count, 1 + N);
  });

  test('concurrent new sessions of one profile each count a visit', async () => {
    const known = await track(service, payload());
    await Promise.all(Array.from({ length: N }, () => track(service, payload({ profile: known.profile }))));
    assert.equal((await read(service, `/profile/${known.profile.id}`)).stats.visits, 1 + N);
  });

  test('concurrent context updates of one session are all kept', async () => {
    const sid = fresh();
    await track(service, payload({ session: { id: sid } }));
    await Promise.all(
      Array.from({ length: N }, (_, i) =>
        track(
          service,
          payload({ session: { id: sid }, context: { [`k${i}`]: i }, properties: { [`p${i}`]: i } }),
        ),
      ),
    );
    const session = await read(service, `/session/${sid}`);
    assert.deepEqual(session.context, Object.fromEntries(Array.from({ length: N }, (_, i) => [`k${i}`, i])));
    assert.deepEqual(
      session.properties,
      Object.fromEntries(Array.from({ length: N }, (_, i) => [`p${i}`, i])),
    );
  });

  test('many different new sessions at once each get their own profile', async () => {
    const results = await Promise.all(Array.from({ length: N }, () => track(service, payload())));
    assert.equal(new Set(results.map((r) => r.profile.id)).size, N);
    for (const r of results) {
      assert.deepEqual((await read(service, `/session/${r.session.id}`)).profile, { id: r.profile.id });
    }
  });
});

describe('several processes sharing one database', () => {
  let a: Service;
  let b: Service;
  beforeEach(async () => {
    a = await startService({}, { lockDataDir: false }); // two processes: no lock, no session cache
    b = await startService({ dataDir: a.dataDir });
    await a.createSource();
  });
  afterEach(async () => {
    await b.close();
    await a.close();
  });

  /** Requests alternate between the two services, all started at once. */
  function both(make: (i: number) => Json): Promise<Json[]> {
    return Promise.all(Array.from({ length: N }, (_, i) => track(i % 2 === 0 ? a : b, make(i))));
  }

  test('context updates of one known session from both processes are all kept (they take turns)', async () => {
    const sid = fresh();
    await track(a, payload({ session: { id: sid } }));
    await both((i) => payload({ session: { id: sid }, context: { [`k${i}`]: i } }));
    const session = await read(a, `/session/${sid}`);
    assert.deepEqual(session.context, Object.fromEntries(Array.from({ length: N }, (_, i) => [`k${i}`, i])));
  });

  test('the same new session id resolves to one session and one profile', async () => {
    const sid = fresh();
    const results = await both((i) =>
      payload({ session: { id: sid }, events: [{ type: 'c', properties: { i } }] }),
    );
    const profiles = new Set(results.map((r) => r.profile.id));
    assert.equal(profiles.size, 1, `profiles: ${[...profiles]}`);
    const [pid] = profiles;
    for (const service of [a, b]) {
      assert.deepEqual((await read(service, `/session/${sid}`)).profile, { id: pid });
      assert.equal((await read(service, `/profile/${pid}`)).stats.visits, 1);
    }
    const events = await allEvents(a);
    assert.equal(events.length, N);
    for (const event of events) assert.deepEqual(event.profile, { id: pid });
  });

  test('visits of one profile from both processes are counted exactly', async () => {
    const known = await track(a, payload());
    await both(() => payload({ profile: known.profile }));
    assert.equal((await read(b, `/profile/${known.profile.id}`)).stats.visits, 1 + N);
  });

  test('with saveSession false every request from either process is a first visit', async () => {
    const sid = fresh();
    const results = await both(() => payload({ session: { id: sid }, options: { saveSession: false } }));
    assert.equal(new Set(results.map((r) => r.profile.id)).size, N);
    assert.equal(await statusOf(a, `/session/${sid}`), 404);
  });
});

function sum(items: Json[], value: (item: Json) => number): number {
  return items.reduce((total, item) => total + value(item), 0);
}
