/**
 * Delivery to a real receiver on 127.0.0.1, on both stores (docs/api.md#delivery): every event
 * stored after a destination was created and matching it arrives, in commit order, signed.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { usePostgres } from '../support/postgres.js';
import { expectStatus, startService, type Json } from '../helpers.js';
import { startReceiver } from '../support/receiver.js';
import {
  assertSigned,
  createDestination,
  quick,
  setUp,
  status,
  STORES,
  trackEvents,
  until,
} from './support.js';

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
    test('failures are retried with the same webhook-id, honouring Retry-After; later events wait', async (t) => {
      const { service, receiver } = await setUp(t, storeConfig);
      const answers = [{ status: 500 }, { status: 503 }, { status: 429, headers: { 'retry-after': '1' } }];
      let retryAfterAt = 0;
      receiver.behave = (_request, index) => {
        if (index === 2) retryAfterAt = Date.now();
        return answers[index] ?? { status: 200 };
      };
      const dest = await createDestination(service, { id: 'flaky', url: receiver.url, batch_size: 2 });
      const first = await trackEvents(service, ['a', 'b']);
      await until(() => receiver.received.length >= 2, 'two failed attempts');
      const failing = await status(service, 'flaky');
      assert.match(String(failing.last_error), /^HTTP 50[03]/);
      assert.ok(failing.failing_since, 'failing_since is set');
      assert.equal(failing.pending, 2);
      const later = await trackEvents(service, ['c']);
      await until(() => receiver.deliveredIds().length >= 3, 'delivered once the receiver is back');
      const attempts = receiver.received.slice(0, 4);
      assert.equal(
        new Set(attempts.map((r) => r.headers['webhook-id'])).size,
        1,
        'one webhook-id for every retry',
      );
      for (const r of attempts)
        assert.deepEqual(
          r.body.events.map((e) => e.id),
          first,
        );
      assert.ok(Date.now() - retryAfterAt >= 0);
      const fourth = receiver.received[3]!;
      assert.ok(Number(fourth.headers['webhook-timestamp']) * 1000 >= retryAfterAt - 1000);
      assert.deepEqual(receiver.deliveredIds(), [...first, ...later]);
      for (const r of receiver.received) assertSigned(r, dest.secret as string);
      // The receiver has the events before the cursor moves past them: wait for both.
      const settled = async () => {
        const now = await status(service, 'flaky');
        return now.failing_since === null && now.pending === 0;
      };
      await until(settled, 'failing ends and nothing is pending');
      assert.equal((await status(service, 'flaky')).delivered, 3);
    });

    test('Retry-After is waited for', async (t) => {
      const { service, receiver } = await setUp(t, storeConfig, { deliveryBackoffMaxMs: 5000 });
      const times: number[] = [];
      receiver.behave = (_request, index) => {
        times.push(Date.now());
        return index === 0 ? { status: 429, headers: { 'retry-after': '2' } } : { status: 200 };
      };
      await createDestination(service, { id: 'slow-down', url: receiver.url });
      await trackEvents(service, ['a']);
      await until(() => receiver.deliveredIds().length === 1, 'delivered after the wait');
      assert.ok(times[1]! - times[0]! >= 1900, `waited ${times[1]! - times[0]!} ms`);
    });

    test('a 400 moves the batch to the failed list, delivery goes on; a retry delivers it', async (t) => {
      const { service, receiver } = await setUp(t, storeConfig);
      receiver.behave = (_request, index) =>
        index === 0 ? { status: 400, body: 'bad\nthing' } : { status: 200 };
      const dest = await createDestination(service, { id: 'strict', url: receiver.url });
      const rejected = await trackEvents(service, ['a', 'b']);
      await until(() => receiver.received.length === 1, 'first attempt');
      const accepted = await trackEvents(service, ['c']);
      await until(() => receiver.deliveredIds().length === 1, 'later events delivered');
      assert.deepEqual(receiver.deliveredIds(), accepted);
      const list = expectStatus(await service.get('/destination/strict/failed'), 200);
      assert.equal(list.result.length, 1);
      const failed = list.result[0] as Json;
      assert.deepEqual(failed.ids, rejected);
      assert.equal(failed.events, 2);
      assert.equal(failed.error, 'HTTP 400: bad thing');
      assert.equal(failed.attempts, 1);
      assert.equal(failed.batch_id, receiver.received[0]!.headers['webhook-id']);
      const st = await status(service, 'strict');
      assert.equal(st.failed, 1);
      assert.equal(st.last_error, 'HTTP 400: bad thing');

      const retried = expectStatus(
        await service.manage('POST', `/destination/strict/failed/${failed.batch_id}/retry`),
        200,
      );
      assert.deepEqual(retried, { batch_id: failed.batch_id, delivered: true, error: null });
      const again = receiver.received[receiver.received.length - 1]!;
      assert.equal(again.headers['webhook-id'], failed.batch_id);
      assert.deepEqual(
        again.body.events.map((e) => e.id),
        rejected,
      );
      assertSigned(again, dest.secret as string);
      assert.equal(expectStatus(await service.get('/destination/strict/failed'), 200).result.length, 0);
      assert.equal((await status(service, 'strict')).delivered, 3);
      const gone = await service.manage('POST', `/destination/strict/failed/${failed.batch_id}/retry`);
      assert.equal(gone.statusCode, 404);
      assert.equal(gone.json().detail, `Failed batch \`${failed.batch_id}\` not found`);
    });

    test('a retry of a failed batch that fails again keeps it with the new error', async (t) => {
      const { service, receiver } = await setUp(t, storeConfig);
      receiver.behave = () => ({ status: 410 });
      await createDestination(service, { id: 'gone', url: receiver.url });
      await trackEvents(service, ['a']);
      await until(async () => (await status(service, 'gone')).failed === 1, 'failed');
      const [failed] = expectStatus(await service.get('/destination/gone/failed'), 200).result as Json[];
      receiver.behave = () => ({ status: 500 });
      const retried = expectStatus(
        await service.manage('POST', `/destination/gone/failed/${failed!.batch_id}/retry`),
        200,
      );
      assert.deepEqual(retried, { batch_id: failed!.batch_id, delivered: false, error: 'HTTP 500' });
      const [kept] = expectStatus(await service.get('/destination/gone/failed'), 200).result as Json[];
      assert.equal(kept!.error, 'HTTP 500');
      assert.equal(kept!.attempts, 2);
    });

    test('a batch failing for longer than the maximum age goes to the failed list', async (t) => {
      const { service, receiver } = await setUp(t, storeConfig, { deliveryMaxAgeSec: 1 });
      receiver.behave = () => ({ status: 502 });
      await createDestination(service, { id: 'down', url: receiver.url, batch_size: 1 });
      await trackEvents(service, ['a', 'b']);
      await until(async () => (await status(service, 'down')).failed === 2, 'both batches failed', 60_000);
      const list = expectStatus(await service.get('/destination/down/failed?limit=1'), 200);
      assert.equal(list.result.length, 1);
      assert.match(list.result[0].error, /^HTTP 502 \(failing for \d+ s\)$/);
      const next = expectStatus(
        await service.get(`/destination/down/failed?limit=1&cursor=${list.next}`),
        200,
      );
      assert.equal(next.result.length, 1);
      assert.notEqual(next.result[0].batch_id, list.result[0].batch_id);
      assert.equal((await status(service, 'down')).pending, 0);
    });

    test('a receiver that does not answer in time is tried again', async (t) => {
      const { service, receiver } = await setUp(t, storeConfig, { deliveryTimeoutMs: 300 });
      receiver.behave = (_request, index) => (index === 0 ? 'hang' : index === 1 ? 'close' : { status: 200 });
      await createDestination(service, { id: 'sleepy', url: receiver.url });
      const sent = await trackEvents(service, ['a']);
      await until(() => receiver.deliveredIds().length === 1, 'delivered on the third attempt');
      assert.deepEqual(receiver.deliveredIds(), sent);
      assert.equal(receiver.received.length, 3);
    });

    test('filters: event types and sources', async (t) => {
      const { service, receiver } = await setUp(t, storeConfig);
      await createDestination(service, {
        id: 'picky',
        url: receiver.url,
        event_types: ['purchase', 'refund'],
        source_ids: ['app'],
      });
      const wanted: string[] = [];
      await trackEvents(service, ['purchase', 'page-view'], undefined, 'web');
      const [purchase, , refund] = await trackEvents(
        service,
        ['purchase', 'page-view', 'refund'],
        undefined,
        'app',
      );
      wanted.push(purchase!, refund!);
      await trackEvents(service, ['page-view'], undefined, 'app');
      wanted.push(...(await trackEvents(service, ['refund'], undefined, 'app')));
      await until(() => receiver.deliveredIds().length >= 3, 'matching events delivered');
      await until(async () => (await status(service, 'picky')).pending === 0, 'nothing pending');
      assert.deepEqual(receiver.deliveredIds(), wanted);
      for (const r of receiver.received) {
        for (const e of r.body.events) assert.ok(['purchase', 'refund'].includes(e.type));
      }
    });

    test('a disabled destination keeps its place; enabled again, it delivers what was stored', async (t) => {
      const { service, receiver } = await setUp(t, storeConfig);
      await createDestination(service, { id: 'paused', url: receiver.url, enabled: false });
      const sent = await trackEvents(service, ['a', 'b']);
      await until(async () => (await status(service, 'paused')).pending === 2, 'pending while disabled');
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(receiver.received.length, 0);
      const before = expectStatus(await service.get('/destination/paused'), 200);
      await createDestination(service, { id: 'paused', url: receiver.url, enabled: true });
      await until(() => receiver.deliveredIds().length === 2, 'delivered once enabled');
      assert.deepEqual(receiver.deliveredIds(), sent);
      assert.equal(expectStatus(await service.get('/destination/paused'), 200).secret, before.secret);
    });

    test('a duplicate (the same client event id again) is not delivered again', async (t) => {
      const { service, receiver } = await setUp(t, storeConfig);
      await createDestination(service, { id: 'dedup', url: receiver.url });
      const send = () =>
        service.post('/track', {
          source: { id: 'web' },
          session: { id: 'dup-session' },
          options: { debugger: true },
          events: [{ type: 'purchase', id: 'client-1' }],
        });
      const first = expectStatus(await send(), 200).debugging.events.ids as string[];
      const again = expectStatus(await send(), 200).debugging.events;
      assert.deepEqual(again.duplicates, ['client-1']);
      const later = await trackEvents(service, ['after']);
      await until(() => receiver.deliveredIds().length >= 2, 'delivered');
      await until(async () => (await status(service, 'dedup')).pending === 0, 'nothing pending');
      assert.deepEqual(receiver.deliveredIds(), [...first, ...later]);
    });

    test('many concurrent requests: every event arrives once, each session in order', async (t) => {
      const { service, receiver } = await setUp(t, storeConfig);
      await createDestination(service, { id: 'all', url: receiver.url, batch_size: 50 });
      const clients = 20;
      const perClient = 15;
      const sent: string[][] = [];
      await Promise.all(
        Array.from({ length: clients }, async (_, c) => {
          const mine: string[] = [];
          sent[c] = mine;
          for (let i = 0; i < perClient; i++) {
            mine.push(...(await trackEvents(service, i % 3 ? ['x'] : ['x', 'y'], `client-${c}`)));
          }
        }),
      );
      const total = sent.flat().length;
      await until(() => receiver.deliveredIds().length >= total, 'all delivered', 60_000);
      const delivered = receiver.deliveredIds();
      assert.equal(new Set(delivered).size, total, 'every event once');
      assert.equal(delivered.length, total, 'no duplicate without a lost answer');
      for (const mine of sent) {
        const order = delivered.filter((id) => mine.includes(id));
        assert.deepEqual(order, mine, 'a session’s events arrive in the order they were stored');
      }
      assert.equal(receiver.maxConcurrentSameId, 1);
    });

    test('delivery goes on after a restart; a batch in flight keeps its webhook-id', async (t) => {
      const receiver = await startReceiver();
      t.after(() => receiver.close());
      const config = { ...(await storeConfig()), ...quick };
      const dataDir = (await import('../helpers.js')).tempDir();
      const first = await startService({ ...config, dataDir });
      await first.createSource({ id: 'web' });
      receiver.behave = () => ({ status: 503 });
      await createDestination(first, { id: 'later', url: receiver.url });
      const sent = await trackEvents(first, ['a', 'b']);
      await until(() => receiver.received.length >= 1, 'attempted');
      await first.close();
      const id = receiver.received[0]!.headers['webhook-id'];
      receiver.behave = () => ({ status: 200 });
      const second = await startService({ ...config, dataDir });
      t.after(() => second.close());
      await second.app.ready(); // delivery starts with the app, as listening does
      await until(() => receiver.deliveredIds().length === 2, 'delivered after the restart');
      assert.deepEqual(receiver.deliveredIds(), sent);
      assert.equal(receiver.received.at(-1)!.headers['webhook-id'], id);
    });
  });
}
