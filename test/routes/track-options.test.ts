/** POST /track options: saving, debugging and their validation (docs/api.md #track-request, #track-options, #track-response). */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { payload, startService, type Service } from '../helpers.js';
import { allEvents, expectFieldError, read, statusOf, track, type Json } from './support.js';

let service: Service;
beforeEach(async () => {
  service = await startService();
  await service.createSource();
});
afterEach(() => service.close());

const fresh = () => `session-${Math.random().toString(36).slice(2)}`;

function assertCounted(value: Json, saved: number, ids: string[], types: string[] = []): void {
  // The events' counts also list the client ids of duplicates (none here).
  const keys =
    'duplicates' in value
      ? ['duplicates', 'errors', 'ids', 'saved', 'types']
      : ['errors', 'ids', 'saved', 'types'];
  assert.deepEqual(Object.keys(value).sort(), keys);
  if ('duplicates' in value) assert.deepEqual(value.duplicates, []);
  assert.equal(value.saved, saved);
  assert.deepEqual(value.errors, []);
  assert.deepEqual([...value.ids].sort(), [...ids].sort());
  assert.deepEqual([...value.types].sort(), [...types].sort());
}

describe('options validation (§3.2)', () => {
  test('an option that is present but not a boolean is a 422 naming the option', async () => {
    for (const name of ['debugger', 'profile', 'saveSession', 'saveEvents']) {
      for (const value of ['true', 1, 0, null, {}, []]) {
        const res = await service.post('/track', payload({ options: { [name]: value } }));
        expectFieldError(res, ['options', name]);
      }
    }
    assert.equal((await allEvents(service)).length, 0);
  });

  test('an event option save that is not a boolean is a 422 naming the event', async () => {
    const res = await service.post(
      '/track',
      payload({ events: [{ type: 'a' }, { type: 'b', options: { save: 'no' } }] }),
    );
    expectFieldError(res, ['events', 1, 'options', 'save']);
    assert.equal((await allEvents(service)).length, 0);
  });

  test('options that are not an object are a 422', async () => {
    expectFieldError(await service.post('/track', payload({ options: 'debug' })), ['options']);
    expectFieldError(await service.post('/track', payload({ events: [{ type: 'a', options: [] }] })), [
      'events',
      0,
      'options',
    ]);
  });

  test('unknown option keys are ignored, null options count as absent', async () => {
    const res = await track(service, payload({ options: { unknown: 'x', another: { a: 1 } } }));
    assert.deepEqual(Object.keys(res.profile), ['id']);
    assert.ok(!('debugging' in res));
    await track(service, payload({ options: null, events: [{ type: 'e', options: null }] }));
    await track(service, payload({ events: [{ type: 'e', options: { other: 1 } }] }));
    assert.equal((await allEvents(service)).length, 3);
  });

  test('the defaults: no debugging, only the profile id, session and events saved', async () => {
    const sid = fresh();
    const res = await track(service, payload({ session: { id: sid }, options: {} }));
    assert.ok(!('debugging' in res));
    assert.deepEqual(Object.keys(res.profile), ['id']);
    assert.equal(await statusOf(service, `/session/${sid}`), 200);
    assert.equal((await allEvents(service)).length, 1);
  });
});

describe('saving options (§3.1, §3.2)', () => {
  test('saveEvents false processes the events without storing them', async () => {
    const sid = fresh();
    const res = await track(
      service,
      payload({
        session: { id: sid },
        events: [{ type: 'a' }, { type: 'b' }],
        options: { saveEvents: false, debugger: true },
      }),
    );
    assert.equal((await allEvents(service)).length, 0);
    assertCounted(res.debugging.events, 0, []);
    assertCounted(res.debugging.session, 1, [sid]);
    assertCounted(res.debugging.profile, 1, [res.profile.id]);
    assert.equal(await statusOf(service, `/session/${sid}`), 200);
    assert.equal(await statusOf(service, `/profile/${res.profile.id}`), 200);
  });

  test('an event with options.save false is processed but not stored; the others are', async () => {
    const res = await track(
      service,
      payload({
        events: [
          { type: 'kept-1' },
          { type: 'dropped', options: { save: false } },
          { type: 'kept-2', options: { save: true } },
        ],
        options: { debugger: true },
      }),
    );
    const stored = await allEvents(service);
    assert.deepEqual(stored.map((e) => e.type).sort(), ['kept-1', 'kept-2']);
    assertCounted(
      res.debugging.events,
      2,
      stored.map((e) => e.id),
      ['kept-1', 'kept-2'],
    );
  });

  test('every event with options.save false: nothing stored, debugging counts 0', async () => {
    const res = await track(
      service,
      payload({ events: [{ type: 'x', options: { save: false } }], options: { debugger: true } }),
    );
    assert.equal((await allEvents(service)).length, 0);
    assertCounted(res.debugging.events, 0, []);
  });

  test('saveSession false stores the profile and the events but not the session', async () => {
    const sid = fresh();
    const res = await track(
      service,
      payload({ session: { id: sid }, options: { saveSession: false, debugger: true } }),
    );
    assert.equal(await statusOf(service, `/session/${sid}`), 404);
    assert.equal(await statusOf(service, `/profile/${res.profile.id}`), 200);
    assert.equal((await allEvents(service)).length, 1);
    assertCounted(res.debugging.session, 0, []);
    assertCounted(res.debugging.profile, 1, [res.profile.id]);
  });

  test('saveSession false leaves an already stored session as it was', async () => {
    const sid = fresh();
    await track(service, payload({ session: { id: sid }, context: { a: 1 } }));
    const before = await read(service, `/session/${sid}`);
    await track(
      service,
      payload({ session: { id: sid }, context: { a: 2 }, options: { saveSession: false } }),
    );
    assert.deepEqual(await read(service, `/session/${sid}`), before);
  });

  test('saveEvents false and saveSession false still keep the profile', async () => {
    const res = await track(service, payload({ options: { saveSession: false, saveEvents: false } }));
    assert.equal((await read(service, `/profile/${res.profile.id}`)).stats.visits, 1);
    assert.equal((await allEvents(service)).length, 0);
  });
});

describe('debugging (§3.6)', () => {
  test('has session, events, profile, execution, segmentation and logs', async () => {
    const sid = fresh();
    const res = await track(
      service,
      payload({
        session: { id: sid },
        events: [{ type: 'page-view' }, { type: 'purchase' }, { type: 'page-view' }],
        options: { debugger: true },
      }),
    );
    const d = res.debugging as Json;
    assert.deepEqual(Object.keys(d).sort(), [
      'events',
      'execution',
      'logs',
      'profile',
      'segmentation',
      'session',
    ]);
    const stored = await allEvents(service);
    assert.equal(stored.length, 3);
    assertCounted(d.session, 1, [sid]);
    assertCounted(d.profile, 1, [res.profile.id]);
    assertCounted(
      d.events,
      3,
      stored.map((e) => e.id),
      ['page-view', 'purchase'],
    );
    assert.deepEqual(d.segmentation, { errors: [], ids: [] });

    assert.equal(typeof d.execution, 'object');
    assert.equal(typeof d.execution.duration_ms, 'number');
    const perEvent = d.execution.events as Json[];
    assert.ok(Array.isArray(perEvent), 'execution lists each event');
    assert.deepEqual(
      perEvent.map((e) => e.type),
      ['page-view', 'purchase', 'page-view'],
    );
    for (const entry of perEvent) {
      assert.equal(typeof entry.duration_ms, 'number');
      assert.ok(entry.duration_ms >= 0);
      assert.equal(entry.saved, true);
    }
    assert.deepEqual(new Set(perEvent.map((e) => e.id)), new Set(stored.map((e) => e.id)));

    assert.ok(Array.isArray(d.logs) && d.logs.length > 0, 'logs are not empty');
    for (const entry of d.logs as Json[]) {
      assert.equal(typeof entry.level, 'string');
      assert.equal(typeof entry.message, 'string');
      assert.ok(entry.message.length > 0);
    }
  });

  test('counts only what the request wrote', async () => {
    const sid = fresh();
    const first = await track(service, payload({ session: { id: sid }, options: { debugger: true } }));
    assert.equal(first.debugging.session.saved, 1);
    assert.equal(first.debugging.profile.saved, 1);

    const unchanged = await track(service, payload({ session: { id: sid }, options: { debugger: true } }));
    assertCounted(unchanged.debugging.session, 0, []);
    assertCounted(unchanged.debugging.profile, 0, []);
    assert.equal(unchanged.debugging.events.saved, 1);

    const changed = await track(
      service,
      payload({ session: { id: sid }, context: { new: true }, options: { debugger: true } }),
    );
    assertCounted(changed.debugging.session, 1, [sid]);
    assertCounted(changed.debugging.profile, 0, []);

    const visit = await track(service, payload({ profile: first.profile, options: { debugger: true } }));
    assert.equal(visit.profile.id, first.profile.id);
    assertCounted(visit.debugging.profile, 1, [first.profile.id]);
  });

  test('per-event execution says which events were not stored', async () => {
    const res = await track(
      service,
      payload({
        events: [{ type: 'a' }, { type: 'b', options: { save: false } }],
        options: { debugger: true },
      }),
    );
    const perEvent = res.debugging.execution.events as Json[];
    assert.deepEqual(
      perEvent.map((e) => [e.type, e.saved]),
      [
        ['a', true],
        ['b', false],
      ],
    );
  });

  test('debugger false or absent gives no debugging object', async () => {
    assert.ok(!('debugging' in (await track(service, payload({ options: { debugger: false } })))));
    assert.ok(!('debugging' in (await track(service, payload()))));
  });

  test('works together with options.profile', async () => {
    const res = await track(service, payload({ options: { debugger: true, profile: true } }));
    assert.equal(res.profile.stats.visits, 1);
    assert.equal(res.debugging.profile.saved, 1);
  });
});

test('TRACK_DEBUG=no (debug: false) ignores options.debugger', async () => {
  const quiet = await startService({ debug: false });
  try {
    await quiet.createSource();
    const res = await track(quiet, payload({ options: { debugger: true, profile: true } }));
    assert.ok(!('debugging' in res), 'debugging must be left out');
    assert.equal(res.profile.stats.visits, 1);
    assert.equal((await allEvents(quiet)).length, 1);
  } finally {
    await quiet.close();
  }
});
