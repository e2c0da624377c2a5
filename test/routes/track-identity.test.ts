/** POST /track: how the session and profile are resolved (docs/api.md #profile-and-session, #profile-less-requests). */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { payload, startService, type Service } from '../helpers.js';
import { allEvents, expectStatus, read, statusOf, timed, track, type Json } from './support.js';

let service: Service;
beforeEach(async () => {
  service = await startService();
  await service.createSource();
});
afterEach(() => service.close());

const session = (id: string) => ({ id });
const fresh = () => `session-${Math.random().toString(36).slice(2)}`;

describe('profile and session without profile_less (§3.4)', () => {
  test('an unknown session without profile creates a session bound to a new profile', async () => {
    const sid = fresh();
    const res = await track(service, payload({ session: session(sid) }));
    const stored = await read(service, `/session/${sid}`);
    assert.deepEqual(stored.profile, { id: res.profile.id });
    const profile = await read(service, `/profile/${res.profile.id}`);
    assert.equal(profile.stats.visits, 1);
  });

  test('an unknown session with a stored profile id uses that profile as a new visit', async () => {
    const first = await timed(() => track(service, payload()));
    const before = await read(service, `/profile/${first.value.profile.id}`);
    assert.deepEqual(before.metadata.time.visit, {
      last: null,
      current: before.metadata.time.visit.current,
      count: 1,
    });
    assert.ok(
      before.metadata.time.visit.current >= first.before && before.metadata.time.visit.current <= first.after,
    );

    const sid = fresh();
    const second = await timed(() =>
      track(service, payload({ session: session(sid), profile: first.value.profile })),
    );
    assert.equal(second.value.profile.id, first.value.profile.id);
    const after = await read(service, `/profile/${first.value.profile.id}`);
    assert.equal(after.stats.visits, 2);
    assert.equal(after.metadata.time.visit.last, before.metadata.time.visit.current);
    assert.equal(after.metadata.time.visit.count, 2);
    const current = after.metadata.time.visit.current as string;
    assert.ok(current >= second.before && current <= second.after, `${current} not within the request`);
    assert.deepEqual((await read(service, `/session/${sid}`)).profile, { id: first.value.profile.id });
  });

  test('visits count every new session of a profile and chain last/current', async () => {
    const first = await track(service, payload());
    const pid = first.profile.id as string;
    const currents: string[] = [(await read(service, `/profile/${pid}`)).metadata.time.visit.current];
    for (let visit = 2; visit <= 4; visit++) {
      const res = await track(service, payload({ profile: { id: pid } }));
      assert.equal(res.profile.id, pid);
      const profile = await read(service, `/profile/${pid}`);
      assert.equal(profile.stats.visits, visit);
      assert.equal(profile.metadata.time.visit.count, visit);
      assert.equal(profile.metadata.time.visit.last, currents[currents.length - 1]);
      currents.push(profile.metadata.time.visit.current);
    }
  });

  test('a client-chosen profile id that does not exist is never adopted', async () => {
    const res = await track(service, payload({ profile: { id: 'client-chosen-id' } }));
    assert.notEqual(res.profile.id, 'client-chosen-id');
    assert.equal(await statusOf(service, '/profile/client-chosen-id'), 404);
    assert.equal((await read(service, `/profile/${res.profile.id}`)).stats.visits, 1);
    const [event] = await allEvents(service);
    assert.deepEqual(event!.profile, { id: res.profile.id });
  });

  test('an empty or null profile id counts as no profile id', async () => {
    for (const profile of [{ id: '' }, { id: null }, {}, null]) {
      const res = await track(service, payload({ profile }));
      assert.equal(typeof res.profile.id, 'string');
      assert.ok(res.profile.id.length > 0);
      assert.equal(await statusOf(service, `/profile/${res.profile.id}`), 200);
    }
  });

  test('on a known session the bound profile wins over the profile id sent', async () => {
    const sid = fresh();
    const mine = await track(service, payload({ session: session(sid) }));
    const other = await track(service, payload());
    const otherBefore = await read(service, `/profile/${other.profile.id}`);

    const res = await track(service, payload({ session: session(sid), profile: other.profile }));
    assert.equal(res.profile.id, mine.profile.id);
    assert.deepEqual((await read(service, `/session/${sid}`)).profile, { id: mine.profile.id });
    assert.deepEqual(await read(service, `/profile/${other.profile.id}`), otherBefore);
    const events = await allEvents(service, { session_id: sid });
    assert.equal(events.length, 2);
    for (const event of events) assert.deepEqual(event.profile, { id: mine.profile.id });
  });

  test('a request on a known session leaves the stored profile untouched', async () => {
    const sid = fresh();
    const first = await track(service, payload({ session: session(sid) }));
    const before = await read(service, `/profile/${first.profile.id}`);
    await track(
      service,
      payload({ session: session(sid), context: { changed: true }, properties: { p: 1 } }),
    );
    await track(service, payload({ session: session(sid), profile: first.profile }));
    assert.deepEqual(await read(service, `/profile/${first.profile.id}`), before);
  });

  test('a session whose profile was erased gets a new profile, not the erased id', async () => {
    const sid = fresh();
    const first = await track(service, payload({ session: session(sid) }));
    expectStatus(await service.manage('DELETE', `/profile/${first.profile.id}`), 200);

    const res = await track(service, payload({ session: session(sid), profile: first.profile }));
    assert.notEqual(res.profile.id, first.profile.id);
    assert.equal(await statusOf(service, `/profile/${first.profile.id}`), 404);
    const profile = await read(service, `/profile/${res.profile.id}`);
    assert.equal(profile.stats.visits, 1);
    assert.deepEqual((await read(service, `/session/${sid}`)).profile, { id: res.profile.id });
  });

  test('a known session without a profile is bound to a new profile (the id sent is ignored)', async () => {
    const sid = fresh();
    const existing = await track(service, payload());
    const existingBefore = await read(service, `/profile/${existing.profile.id}`);
    await track(service, payload({ session: session(sid) }), '?profile_less=true');
    assert.equal((await read(service, `/session/${sid}`)).profile, null);

    const res = await track(service, payload({ session: session(sid), profile: existing.profile }));
    assert.notEqual(res.profile.id, existing.profile.id);
    assert.deepEqual((await read(service, `/session/${sid}`)).profile, { id: res.profile.id });
    assert.equal((await read(service, `/profile/${res.profile.id}`)).stats.visits, 1);
    assert.deepEqual(await read(service, `/profile/${existing.profile.id}`), existingBefore);

    const again = await track(service, payload({ session: session(sid) }));
    assert.equal(again.profile.id, res.profile.id);
    assert.equal((await read(service, `/profile/${res.profile.id}`)).stats.visits, 1);
  });

  test('the profile is stored even when the session is not', async () => {
    const sid = fresh();
    const res = await track(service, payload({ session: session(sid), options: { saveSession: false } }));
    assert.equal(await statusOf(service, `/session/${sid}`), 404);
    assert.equal((await read(service, `/profile/${res.profile.id}`)).stats.visits, 1);
    const [event] = await allEvents(service);
    assert.deepEqual(event!.profile, { id: res.profile.id });
    assert.deepEqual(event!.session, { id: sid });
  });

  test('with saveSession false every request on the same session id is a new visit', async () => {
    const sid = fresh();
    const first = await track(service, payload({ session: session(sid), options: { saveSession: false } }));
    for (let visit = 2; visit <= 3; visit++) {
      const res = await track(
        service,
        payload({ session: session(sid), profile: first.profile, options: { saveSession: false } }),
      );
      assert.equal(res.profile.id, first.profile.id);
      assert.equal((await read(service, `/profile/${first.profile.id}`)).stats.visits, visit);
    }
    const other = await track(service, payload({ session: session(sid), options: { saveSession: false } }));
    assert.notEqual(other.profile.id, first.profile.id);
    assert.equal(await statusOf(service, `/session/${sid}`), 404);
  });
});

describe('context and properties (§3.4)', () => {
  test('top-level context and properties are merged into the stored session', async () => {
    const sid = fresh();
    await track(
      service,
      payload({ session: session(sid), context: { a: 1, keep: 'x' }, properties: { p: 1, q: 'old' } }),
    );
    let stored = await read(service, `/session/${sid}`);
    assert.deepEqual(stored.context, { a: 1, keep: 'x' });
    assert.deepEqual(stored.properties, { p: 1, q: 'old' });

    await track(
      service,
      payload({ session: session(sid), context: { a: 2, b: [1, 2] }, properties: { q: 'new' } }),
    );
    stored = await read(service, `/session/${sid}`);
    assert.deepEqual(stored.context, { a: 2, keep: 'x', b: [1, 2] });
    assert.deepEqual(stored.properties, { p: 1, q: 'new' });

    await track(service, payload({ session: session(sid), context: null, properties: null }));
    stored = await read(service, `/session/${sid}`);
    assert.deepEqual(stored.context, { a: 2, keep: 'x', b: [1, 2] });
    assert.deepEqual(stored.properties, { p: 1, q: 'new' });
  });

  test('a stored event context is the top-level context merged with its own (the event wins)', async () => {
    await track(
      service,
      payload({
        context: { shared: 'top', onlyTop: 1 },
        events: [
          { type: 'own', context: { shared: 'event', onlyEvent: 2 } },
          { type: 'none' },
          { type: 'null', context: null },
        ],
      }),
    );
    const byType = new Map((await allEvents(service)).map((e) => [e.type, e]));
    assert.deepEqual(byType.get('own')!.context, { shared: 'event', onlyTop: 1, onlyEvent: 2 });
    assert.deepEqual(byType.get('none')!.context, { shared: 'top', onlyTop: 1 });
    assert.deepEqual(byType.get('null')!.context, { shared: 'top', onlyTop: 1 });
  });

  test('the event context is not mixed with what the session gathered before', async () => {
    const sid = fresh();
    await track(service, payload({ session: session(sid), context: { earlier: true } }));
    await track(
      service,
      payload({ session: session(sid), context: { now: true }, events: [{ type: 'second' }] }),
    );
    const [event] = await allEvents(service, { type: 'second' });
    assert.deepEqual(event!.context, { now: true });
  });

  test('context updates the session even when the session is saved profile-less', async () => {
    const sid = fresh();
    await track(service, payload({ session: session(sid), context: { a: 1 } }), '?profile_less=true');
    await track(service, payload({ session: session(sid), context: { b: 2 } }), '?profile_less=true');
    const stored = await read(service, `/session/${sid}`);
    assert.deepEqual(stored.context, { a: 1, b: 2 });
    assert.equal(stored.profile, null);
  });
});

describe('profile_less=true (§3.5)', () => {
  test('no profile is created, events are profile-less, the session is saved without profile', async () => {
    const sid = fresh();
    const res = await track(
      service,
      payload({ session: session(sid), events: [{ type: 'a' }, { type: 'b' }] }),
      '?profile_less=true',
    );
    assert.ok(!('profile' in res), `no profile key expected: ${JSON.stringify(res)}`);
    assert.deepEqual(res.session, { id: sid });
    assert.deepEqual(res.ux, []);
    assert.deepEqual(res.response, {});
    const stored = await read(service, `/session/${sid}`);
    assert.equal(stored.profile, null);
    const events = await allEvents(service);
    assert.equal(events.length, 2);
    for (const event of events) {
      assert.equal(event.profile, null);
      assert.equal(event.metadata.profile_less, true);
      assert.deepEqual(event.session, { id: sid });
    }
  });

  test('a profile id sent is neither loaded nor created nor visited', async () => {
    const known = await track(service, payload());
    const knownBefore = await read(service, `/profile/${known.profile.id}`);
    const sid = fresh();
    const res = await track(
      service,
      payload({ session: session(sid), profile: known.profile, options: { profile: true, debugger: true } }),
      '?profile_less=true',
    );
    assert.ok(!('profile' in res));
    assert.equal(res.debugging.profile.saved, 0);
    assert.deepEqual(await read(service, `/profile/${known.profile.id}`), knownBefore);
    assert.equal((await read(service, `/session/${sid}`)).profile, null);

    const unknown = await track(service, payload({ profile: { id: 'made-up' } }), '?profile_less=true');
    assert.ok(!('profile' in unknown));
    assert.equal(await statusOf(service, '/profile/made-up'), 404);
    assert.equal((await allEvents(service, { profile_id: known.profile.id })).length, 1);
  });

  test('a known session keeps the profile it is bound to', async () => {
    const sid = fresh();
    const first = await track(service, payload({ session: session(sid) }));
    const profileBefore = await read(service, `/profile/${first.profile.id}`);
    const res = await track(
      service,
      payload({ session: session(sid), events: [{ type: 'anon' }] }),
      '?profile_less=true',
    );
    assert.ok(!('profile' in res));
    assert.deepEqual((await read(service, `/session/${sid}`)).profile, { id: first.profile.id });
    assert.deepEqual(await read(service, `/profile/${first.profile.id}`), profileBefore);
    const [event] = await allEvents(service, { type: 'anon' });
    assert.equal(event!.profile, null);
    assert.equal(event!.metadata.profile_less, true);
  });

  test('profile_less=false behaves as without the parameter', async () => {
    const res = await track(service, payload(), '?profile_less=false');
    assert.equal(await statusOf(service, `/profile/${res.profile.id}`), 200);
    const [event] = await allEvents(service);
    assert.equal(event!.metadata.profile_less, false);
  });

  test('a profile_less value that is not a boolean is a 422', async () => {
    const res = await service.post('/track?profile_less=maybe', payload());
    assert.equal(res.statusCode, 422, res.body);
    assert.equal((await allEvents(service)).length, 0);
  });

  test('with saveSession false nothing but the events is stored', async () => {
    const sid = fresh();
    await track(
      service,
      payload({ session: session(sid), options: { saveSession: false } }),
      '?profile_less=true',
    );
    assert.equal(await statusOf(service, `/session/${sid}`), 404);
    const [event] = await allEvents(service);
    assert.equal(event!.profile, null);
    assert.equal(event!.metadata.profile_less, true);
  });
});

describe('records kept consistent', () => {
  test('the events of a request point at the profile the response returned', async () => {
    const results: Json[] = [];
    for (let i = 0; i < 3; i++) results.push(await track(service, payload({ events: [{ type: `t${i}` }] })));
    for (const [i, res] of results.entries()) {
      const events = await allEvents(service, { type: `t${i}` });
      assert.equal(events.length, 1);
      assert.deepEqual(events[0]!.profile, { id: res.profile.id });
    }
  });
});
