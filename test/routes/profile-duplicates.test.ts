/**
 * Duplicate events run no rule (docs/api.md #duplicates, #applying-rules), on both stores: an event
 * sent again with its client id changes the profile once, within a request and across requests,
 * for a stored profile and for a new one, identities included, and at the same moment too.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Service } from '../helpers.js';
import { usePostgres } from '../support/postgres.js';
import { profileOf, rule, send, startOn, STORES } from './profiles-support.js';
import type { Json } from './support.js';

usePostgres();

const purchase = (id: string, price: number, extra: Json = {}) => ({
  id,
  type: 'purchase',
  properties: { price, ...extra },
});

/** collector_profile_rules_applied_total, as /metrics says it now. */
async function rulesApplied(service: Service): Promise<number> {
  const text = (await service.get('/metrics')).body;
  return Number(/^collector_profile_rules_applied_total (\S+)$/m.exec(text)?.[1] ?? 0);
}

for (const store of STORES) {
  describe(`duplicates run no rule (${store})`, () => {
    let service: Service;
    before(async () => {
      service = await startOn(store);
      await rule(service, {
        id: 'purchases',
        event_type: 'purchase',
        operations: [
          { op: 'increment', path: 'traits.public.total', from: 'properties.price' },
          { op: 'increment', path: 'traits.public.orders' },
          { op: 'identify', type: 'email', from: 'properties.email' },
        ],
      });
    });
    after(() => service.close());

    test('an event sent again changes a stored profile once; so does one repeated in a request', async () => {
      const session = `dup-${store}`;
      const first = await send(service, { session: { id: session }, events: [{ type: 'page-view' }] });
      const id = first.profile.id as string;
      const a = await send(service, { session: { id: session }, events: [purchase('order-1', 10)] });
      assert.equal(a.debugging.execution.events[0].rules.length, 1);
      const applied = await rulesApplied(service);
      const again = await send(service, {
        session: { id: session },
        events: [purchase('order-1', 10), purchase('order-2', 5), purchase('order-2', 5)],
      });
      assert.equal(await rulesApplied(service), applied + 1, 'the duplicates count no rule applied');
      assert.deepEqual(again.debugging.events.duplicates, ['order-1', 'order-2']);
      const skipped = again.debugging.execution.events.filter((e: Json) => e.skipped === 'duplicate');
      assert.equal(skipped.length, 2);
      assert.ok(
        skipped.every((e: Json) => e.rules === undefined),
        'a duplicate names no rule',
      );
      const profile = await profileOf(service, id);
      assert.deepEqual(profile.traits.public, { total: 15, orders: 2 });
      assert.equal(again.debugging.profile.saved, 1);
    });

    test('a new profile whose event proves a duplicate is made without its operations', async () => {
      // saveSession false: every request is a first visit, with a new profile.
      const options = { saveSession: false };
      const first = await send(service, {
        options,
        events: [purchase('new-1', 7, { email: `first-${store}@example.com` })],
      });
      const second = await send(service, {
        options,
        events: [purchase('new-1', 7, { email: `second-${store}@example.com` }), purchase('new-2', 1)],
      });
      assert.notEqual(second.profile.id, first.profile.id);
      assert.deepEqual(second.debugging.events.duplicates, ['new-1']);
      const fresh = await profileOf(service, second.profile.id);
      assert.deepEqual(fresh.traits.public, { total: 1, orders: 1 });
      assert.deepEqual(fresh.ids, [], "the duplicate's identity is not attached");
      assert.deepEqual((await profileOf(service, first.profile.id)).traits.public, { total: 7, orders: 1 });
    });

    test('many requests sending the same events at once change the profile once per event', async () => {
      const first = await send(service, { events: [{ type: 'page-view' }] });
      const id = first.profile.id as string;
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          send(service, {
            session: { id: `same-${store}-${i}` },
            profile: { id },
            events: [purchase(`same-${i % 4}`, 1)],
          }),
        ),
      );
      const duplicates = answers.reduce((n, a) => n + (a.debugging.events.duplicates?.length ?? 0), 0);
      assert.equal(duplicates, 36);
      assert.deepEqual((await profileOf(service, id)).traits.public, { total: 4, orders: 4 });
    });
  });
}
