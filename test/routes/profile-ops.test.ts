/**
 * Profile rules applied by /track (docs/api.md #profile-rules, #operations), on both stores: each
 * operation, the order of rules and operations, profile@ targets seeing the rules' result, a 406
 * leaving the profile untouched, and what debugging reports.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { payload, type Service } from '../helpers.js';
import { usePostgres } from '../support/postgres.js';
import { profileOf, rule, send, startOn, STORES, visitor } from './profiles-support.js';
import { expectStatus, type Json } from './support.js';

usePostgres();

for (const store of STORES) {
  describe(`profile operations (${store})`, () => {
    let service: Service;
    before(async () => {
      service = await startOn(store);
    });
    after(() => service.close());

    test('set, set_once, unset and increment, from the event or literal', async () => {
      await rule(service, {
        id: 'ops-1',
        event_type: 'ops-1',
        operations: [
          { op: 'set', path: 'traits.public.plan', from: 'properties.plan' },
          { op: 'set', path: 'traits.public.source', value: { name: 'web', n: 1 } },
          { op: 'set_once', path: 'traits.public.first_plan', from: 'properties.plan' },
          { op: 'set', path: 'interests.page', from: 'context.page.url' },
          { op: 'increment', path: 'traits.public.count' },
          { op: 'increment', path: 'traits.public.total', from: 'properties.amount' },
          { op: 'increment', path: 'traits.public.tenths', value: 0.5 },
          { op: 'unset', path: 'traits.public.gone' },
        ],
      });
      const v = visitor(service);
      await v.send('ops-1', { plan: 'free', amount: 10 }, { context: { page: { url: 'https://a/' } } });
      await v.send('ops-1', { plan: 'pro', amount: 2.5 });
      const p = await v.profile();
      assert.deepEqual(p.traits.public, {
        plan: 'pro',
        source: { name: 'web', n: 1 },
        first_plan: 'free',
        count: 2,
        total: 12.5,
        tenths: 1,
      });
      assert.deepEqual(p.interests, { page: 'https://a/' }, 'from a path that has no value: nothing');
    });

    test('increment replaces a value that is not a number, ignores a non-number to add', async () => {
      await rule(service, {
        id: 'ops-2a',
        event_type: 'ops-2a',
        operations: [{ op: 'set', path: 'traits.public.n', value: 'seven' }],
      });
      await rule(service, {
        id: 'ops-2b',
        event_type: 'ops-2b',
        operations: [{ op: 'increment', path: 'traits.public.n', from: 'properties.by' }],
      });
      const v = visitor(service);
      await v.send('ops-2a');
      await v.send('ops-2b', { by: 3 });
      assert.equal((await v.profile()).traits.public.n, 3);
      await v.send('ops-2b', { by: '4' });
      await v.send('ops-2b', { by: null });
      assert.equal((await v.profile()).traits.public.n, 3);
    });

    test('append adds once, items of an array each; segments are added and removed', async () => {
      await rule(service, {
        id: 'ops-3',
        event_type: 'ops-3',
        operations: [
          { op: 'append', path: 'traits.public.tags', from: 'properties.tag' },
          { op: 'append', path: 'traits.public.tags', from: 'properties.more' },
          { op: 'add_segment', from: 'properties.segment' },
          { op: 'remove_segment', from: 'properties.drop' },
        ],
      });
      const v = visitor(service);
      await v.send('ops-3', { tag: 'a', segment: 'buyers' });
      await v.send('ops-3', { tag: 'a', more: ['b', 'a', { x: 1 }], segment: 'vip' });
      await v.send('ops-3', { more: [{ x: 1 }, 'c'], segment: 'buyers', drop: 'vip' });
      const p = await v.profile();
      assert.deepEqual(p.traits.public.tags, ['a', 'b', { x: 1 }, 'c']);
      assert.deepEqual(p.segments, ['buyers']);
    });

    test('rules apply in the order first saved; a replaced rule keeps its place', async () => {
      await rule(service, {
        id: 'order-b',
        event_type: 'order',
        operations: [{ op: 'set', path: 'traits.public.last', value: 'b' }],
      });
      await rule(service, {
        id: 'order-a',
        event_type: 'order',
        operations: [{ op: 'set', path: 'traits.public.last', value: 'a' }],
      });
      const v = visitor(service);
      await v.send('order');
      assert.equal((await v.profile()).traits.public.last, 'a');
      await rule(service, {
        id: 'order-b',
        event_type: 'order',
        operations: [
          { op: 'set', path: 'traits.public.last', value: 'b2' },
          { op: 'set', path: 'traits.public.also', value: true },
        ],
      });
      const listed = expectStatus(await service.get('/profile-rules?event_type=order'), 200);
      assert.deepEqual(
        listed.result.map((r: Json) => r.id),
        ['order-b', 'order-a'],
      );
      await v.send('order');
      const p = await v.profile();
      assert.equal(p.traits.public.last, 'a', 'the later rule still wins');
      assert.equal(p.traits.public.also, true);
    });

    test('profile@ targets see the profile after the rules; a 406 leaves it untouched', async () => {
      await rule(service, {
        id: 'gate',
        event_type: 'gate',
        operations: [
          { op: 'increment', path: 'traits.public.tries' },
          { op: 'set', path: 'traits.public.level', from: 'properties.level' },
        ],
      });
      expectStatus(
        await service.manage('POST', '/event/management', {
          event_type: 'gate',
          validation: {
            json_schema: {
              'event@properties': { type: 'object' },
              'profile@traits.public.level': { type: 'integer', maximum: 3 },
            },
          },
        }),
        200,
      );
      const v = visitor(service);
      const first = await v.send('gate', { level: 1 });
      assert.equal(first.debugging.profile.saved, 1);
      const refused = await service.post(
        '/track',
        payload({ session: { id: v.session }, events: [{ type: 'gate', properties: { level: 9 } }] }),
      );
      const body = expectStatus(refused, 406);
      assert.deepEqual(body.errors, [
        { event: 0, type: 'gate', target: 'profile@traits.public.level', reason: 'must be <= 3' },
      ]);
      assert.deepEqual((await v.profile()).traits.public, { tries: 1, level: 1 }, 'nothing of the 406');
      // Without a value there is nothing to check against: the path has no value before the rule.
      const noLevel = await service.post('/track', payload({ events: [{ type: 'gate', properties: {} }] }));
      assert.equal(expectStatus(noLevel, 406).errors[0].reason, 'no value at `traits.public.level`');
      await v.send('gate', { level: 3 });
      assert.deepEqual((await v.profile()).traits.public, { tries: 2, level: 3 });
    });
  });
}

describe('profile rules in the pipeline (sqlite)', () => {
  let service: Service;
  before(async () => {
    service = await startOn('sqlite');
    await service.createSource({ id: 'app' });
  });
  after(() => service.close());

  test('debugging names each rule applied to each event, and counts the profile only when it changed', async () => {
    await rule(service, {
      id: 'dbg-1',
      name: 'Plan',
      event_type: 'dbg',
      operations: [{ op: 'set', path: 'traits.public.plan', from: 'properties.plan' }],
    });
    await rule(service, {
      id: 'dbg-2',
      name: 'Seen',
      event_type: 'dbg',
      operations: [{ op: 'add_segment', value: 'seen' }],
    });
    const v = visitor(service);
    await v.send('page-view');
    const answer = await v.send('dbg', { plan: 'pro' });
    const execution = answer.debugging.execution;
    assert.deepEqual(
      execution.steps.map((s: Json) => s.step),
      ['source', 'identity', 'events', 'validation', 'rules', 'commit'],
    );
    assert.deepEqual(execution.events[0].rules, [
      { id: 'dbg-1', name: 'Plan' },
      { id: 'dbg-2', name: 'Seen' },
    ]);
    assert.deepEqual(answer.debugging.profile, { saved: 1, errors: [], ids: [v.id], types: [] });
    // The same values again change nothing: the profile is not written.
    const again = await v.send('dbg', { plan: 'pro' });
    assert.equal(again.debugging.profile.saved, 0);
    assert.deepEqual(again.debugging.execution.events[0].rules.length, 2);
    const plain = await v.send('page-view');
    assert.equal(plain.debugging.execution.events[0].rules, undefined);
  });

  test('source_id limits a rule to a source; a disabled rule does nothing', async () => {
    await rule(service, {
      id: 'src-only',
      event_type: 'src',
      source_id: 'app',
      operations: [{ op: 'increment', path: 'traits.public.app' }],
    });
    await rule(service, {
      id: 'src-off',
      event_type: 'src',
      enabled: false,
      operations: [{ op: 'increment', path: 'traits.public.off' }],
    });
    const v = visitor(service);
    await v.send('src');
    assert.deepEqual((await v.profile()).traits.public, {});
    await send(service, { source: { id: 'app' }, session: { id: v.session }, events: [{ type: 'src' }] });
    assert.deepEqual((await v.profile()).traits.public, { app: 1 });
  });

  test('events not stored run the rules; profile-less requests and transitional sources change no profile', async () => {
    await rule(service, {
      id: 'unsaved',
      event_type: 'unsaved',
      operations: [{ op: 'increment', path: 'traits.public.n' }],
    });
    const v = visitor(service);
    await v.send('unsaved', {}, { options: { saveEvents: false } });
    await send(service, {
      session: { id: v.session },
      events: [{ type: 'unsaved', options: { save: false } }, { type: 'unsaved' }],
    });
    assert.equal((await v.profile()).traits.public.n, 3);
    const less = expectStatus(
      await service.post(
        `/track?profile_less=true`,
        payload({ session: { id: v.session }, events: [{ type: 'unsaved' }] }),
      ),
      200,
    );
    assert.equal(less.profile, undefined);
    assert.equal((await v.profile()).traits.public.n, 3);

    await service.createSource({ id: 'passing', transitional: true });
    const passing = await send(service, {
      source: { id: 'passing' },
      events: [{ type: 'unsaved' }],
      options: { profile: true },
    });
    assert.equal(passing.profile.traits.public.n, 1, 'answered as the rules leave it');
    assert.equal((await service.get(`/profile/${passing.profile.id}`)).statusCode, 404, 'nothing stored');
  });

  test('options.profile returns public traits as the rules left them, never private traits or ids', async () => {
    await rule(service, {
      id: 'private',
      event_type: 'private',
      operations: [
        { op: 'set', path: 'traits.private.email', from: 'properties.email' },
        { op: 'set', path: 'traits.public.name', from: 'properties.name' },
        { op: 'identify', type: 'email', from: 'properties.email' },
      ],
    });
    const answer = await send(service, {
      events: [{ type: 'private', properties: { email: 'x@example.com', name: 'X' } }],
      options: { profile: true },
    });
    assert.deepEqual(answer.profile.traits, { public: { name: 'X' } });
    assert.equal(answer.profile.ids, undefined);
    assert.equal(answer.profile.merged, undefined);
    const stored = await profileOf(service, answer.profile.id);
    assert.deepEqual(stored.traits.private, { email: 'x@example.com' });
    assert.deepEqual(stored.ids, [{ type: 'email', value: 'x@example.com' }]);
  });

  test('a rule saved, moved to another event type or deleted applies on this process at once', async () => {
    const v = visitor(service);
    await v.send('cache-a');
    await rule(service, {
      id: 'moving',
      event_type: 'cache-a',
      operations: [{ op: 'increment', path: 'traits.public.a' }],
    });
    await v.send('cache-a');
    await rule(service, {
      id: 'moving',
      event_type: 'cache-b',
      operations: [{ op: 'increment', path: 'traits.public.b' }],
    });
    await v.send('cache-a');
    await v.send('cache-b');
    expectStatus(await service.manage('DELETE', '/profile-rule/moving'), 200);
    await v.send('cache-b');
    assert.deepEqual((await v.profile()).traits.public, { a: 1, b: 1 });
  });

  test('rule applications and merges are counted in the metrics', async () => {
    await rule(service, {
      id: 'counted',
      event_type: 'counted',
      operations: [{ op: 'identify', type: 'user_id', from: 'properties.user' }],
    });
    const before = await metric(service);
    await send(service, {
      events: [{ type: 'counted', properties: { user: 'u-metrics' } }, { type: 'counted' }],
    });
    await send(service, { events: [{ type: 'counted', properties: { user: 'u-metrics' } }] });
    const now = await metric(service);
    assert.equal(now.rules - before.rules, 3);
    assert.equal(now.merges - before.merges, 1);
  });
});

async function metric(service: Service): Promise<{ rules: number; merges: number }> {
  const text = (await service.get('/metrics')).body;
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  return {
    rules: value('collector_profile_rules_applied_total'),
    merges: value('collector_profile_merges_total'),
  };
}
