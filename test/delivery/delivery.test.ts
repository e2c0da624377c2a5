/**
 * Delivery to a real receiver on 127.0.0.1, on both stores (docs/api.md#delivery): every event
 * stored after a destination was created and matching it arrives, in commit order, signed.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { usePostgres } from '../support/postgres.js';
import { assertSigned, createDestination, setUp, status, STORES, trackEvents, until } from './support.js';

usePostgres();

for (const [name, storeConfig] of STORES) {
  describe(`${name}: delivery`, () => {
    test('events stored after creation arrive in order, signed, with the headers', async (t) => {
      const { service, receiver } = await setUp(t, storeConfig);
      const before = await trackEvents(service, ['page-view']);
      const dest = await createDestination(service, {
        id: 'hook',
        url: receiver.url,
        headers: { authorization: 'Bearer receiver-token' },
        batch_size: 3,
      });
      assert.match(dest.secret, /^whsec_[A-Za-z0-9+/]+=*$/);
      const sent: string[] = [];
      for (let i = 0; i < 4; i++) sent.push(...(await trackEvents(service, ['a', 'b'])));
      await until(() => receiver.deliveredIds().length >= sent.length, 'all delivered');
      assert.deepEqual(receiver.deliveredIds(), sent);
      assert.ok(!receiver.deliveredIds().includes(before[0]!), 'an event stored before is not delivered');
      const ids = new Set<string>();
      for (const request of receiver.received) {
        assert.ok(request.body.events.length <= 3, 'batch_size holds');
        assert.equal(request.body.destination, 'hook');
        assert.equal(request.headers['content-type'], 'application/json');
        assert.equal(request.headers.authorization, 'Bearer receiver-token');
        assertSigned(request, dest.secret as string);
        ids.add(String(request.headers['webhook-id']));
      }
      assert.equal(ids.size, receiver.received.length, 'webhook-id unique per batch');
      const event = receiver.received[0]!.body.events[0]!;
      assert.deepEqual(event, (await service.get(`/event/${event.id}`)).json());
      await until(async () => (await status(service, 'hook')).delivered === sent.length, 'status counts');
      assert.deepEqual(await status(service, 'hook'), {
        delivered: sent.length,
        pending: 0,
        failing_since: null,
        last_error: null,
        failed: 0,
      });
    });
  });
}
