/**
 * Duplicates by client event id (docs/api.md#duplicates), through the HTTP API, on the embedded store
 * and on PostgreSQL: resent requests, repeats inside a request, concurrent requests, sources, the
 * metric, replays from the quarantine.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { payload, startService, type Service } from '../helpers.js';
import { testSchema, usePostgres } from '../support/postgres.js';
import { allEvents, expectFieldError, track, type Json } from './support.js';

usePostgres();

const fresh = () => `session-${Math.random().toString(36).slice(2)}`;
const debug = { debugger: true };

function metric(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

for (const store of ['sqlite', 'postgres'] as const) {
  describe(`duplicates (${store})`, () => {
    let service: Service;
    before(async () => {
      service = await startService(store === 'postgres' ? { databaseUrl: await testSchema() } : {});
      await service.createSource();
      await service.createSource({ id: 'src-2' });
    });
    after(() => service.close());

    test('a resent request stores nothing again and lists the duplicate ids', async () => {
      const body = payload({
        session: { id: fresh() },
        events: [
          { type: 'view', id: 'r-1' },
          { type: 'buy', id: 'r-2' },
        ],
        options: debug,
      });
      const first = await track(service, body);
      assert.equal(first.debugging.events.saved, 2);
      assert.deepEqual(first.debugging.events.duplicates, []);
      const second = await track(service, {
        ...body,
        events: [...(body.events as Json[]), { type: 'new', id: 'r-3' }],
      });
      assert.equal(second.debugging.events.saved, 1);
      assert.deepEqual(second.debugging.events.duplicates.sort(), ['r-1', 'r-2']);
      assert.deepEqual(second.debugging.events.types, ['new']);
      const skipped = (second.debugging.execution.events as Json[]).filter((e) => e.skipped === 'duplicate');
      assert.equal(skipped.length, 2);
      assert.ok(skipped.every((e) => e.saved === false));
      for (const clientId of ['r-1', 'r-2', 'r-3']) {
        const found = await allEvents(service, { client_id: clientId });
        assert.equal(found.length, 1, clientId);
        assert.equal(found[0]!.metadata.client_id, clientId);
        assert.notEqual(found[0]!.id, clientId, 'the stored event keeps a server id');
      }
      assert.deepEqual(
        (await allEvents(service, { client_id: 'r-1' }))[0]!.id,
        first.debugging.events.ids[0],
        'the first one is kept',
      );
    });

    test('within one request a repeated id is a duplicate of the first', async () => {
      const sid = fresh();
      const res = await track(
        service,
        payload({
          session: { id: sid },
          events: [
            { type: 'a', id: 'rep', properties: { n: 1 } },
            { type: 'b', id: 'rep', properties: { n: 2 } },
            { type: 'c', properties: { n: 3 } },
            { type: 'd', properties: { n: 4 } },
          ],
          options: debug,
        }),
      );
      assert.equal(res.debugging.events.saved, 3);
      assert.deepEqual(res.debugging.events.duplicates, ['rep']);
      const stored = await allEvents(service, { session_id: sid });
      assert.deepEqual(stored.map((e) => e.type).sort(), ['a', 'c', 'd']);
      assert.deepEqual((await allEvents(service, { client_id: 'rep' }))[0]!.properties, { n: 1 });
    });

    test('the same id in 20 concurrent requests is stored once', async () => {
      const sessions = [fresh(), fresh()];
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          track(
            service,
            payload({
              // Half share one session (they take turns), half have their own (they commit together).
              session: { id: i % 2 ? sessions[0] : `${sessions[1]}-${i}` },
              events: [
                { type: 'race', id: 'concurrent' },
                { type: 'own', id: `own-${i}` },
              ],
              options: debug,
            }),
          ),
        ),
      );
      assert.equal((await allEvents(service, { client_id: 'concurrent' })).length, 1);
      const duplicates = answers.flatMap((a) => a.debugging.events.duplicates as string[]);
      assert.deepEqual(
        duplicates,
        Array.from({ length: 19 }, () => 'concurrent'),
      );
      assert.equal(answers.filter((a) => a.debugging.events.saved === 2).length, 1);
      for (let i = 0; i < 20; i++)
        assert.equal((await allEvents(service, { client_id: `own-${i}` })).length, 1);
    });

    test('ids are per source; events without id are never duplicates', async () => {
      const body = (source: string) =>
        payload({
          source: { id: source },
          events: [{ type: 'x', id: 'shared' }, { type: 'y' }],
          options: debug,
        });
      assert.deepEqual((await track(service, body('src-1'))).debugging.events.duplicates, []);
      const other = await track(service, body('src-2'));
      assert.deepEqual(other.debugging.events.duplicates, []);
      assert.equal(other.debugging.events.saved, 2);
      assert.equal((await allEvents(service, { client_id: 'shared' })).length, 2);
      assert.equal((await allEvents(service, { client_id: 'shared', source_id: 'src-2' })).length, 1);
      const again = await track(service, body('src-2'));
      assert.deepEqual(again.debugging.events.duplicates, ['shared']);
      assert.equal(again.debugging.events.saved, 1, 'the event without an id is stored again');
    });

    test('duplicates are counted per source in /metrics', async () => {
      const body = payload({ source: { id: 'src-2' }, events: [{ type: 'm', id: 'metric-1' }] });
      await track(service, body);
      const before = metric(
        (await service.get('/metrics')).body,
        'collector_duplicate_events_total{source="src-2"}',
      );
      await track(service, body);
      await track(service, body);
      const text = (await service.get('/metrics')).body;
      assert.equal(metric(text, 'collector_duplicate_events_total{source="src-2"}'), before + 2);
    });

    test('events that are not stored are not checked: saveEvents false, save false', async () => {
      await track(service, payload({ events: [{ type: 'k', id: 'kept-1' }] }));
      const res = await track(
        service,
        payload({ events: [{ type: 'k', id: 'kept-1' }], options: { ...debug, saveEvents: false } }),
      );
      assert.deepEqual(res.debugging.events.duplicates, []);
      const one = await track(
        service,
        payload({ events: [{ type: 'k', id: 'kept-1', options: { save: false } }], options: debug }),
      );
      assert.deepEqual(one.debugging.events.duplicates, []);
      assert.equal((await allEvents(service, { client_id: 'kept-1' })).length, 1);
    });

    test('a replay from the quarantine does not store events already stored', async () => {
      await service.manage('POST', '/event/management', {
        event_type: 'order',
        validation: { json_schema: { 'event@properties': { type: 'object', required: ['price'] } } },
      });
      const body = payload({
        events: [
          { type: 'order', id: 'order-1', properties: { sku: 'a' } },
          { type: 'note', id: 'order-note' },
        ],
        options: debug,
      });
      assert.equal((await service.post('/track', body)).statusCode, 406);
      const rejected = (await service.get('/event/rejected?event_type=order')).json().result[0] as Json;
      // The schema is relaxed and the client sends its request again: stored.
      await service.manage('POST', '/event/management', { event_type: 'order' });
      assert.equal((await track(service, body)).debugging.events.saved, 2);
      const replay = await service.manage('POST', `/event/rejected/${rejected.id}/replay`);
      assert.equal(replay.statusCode, 200, replay.body);
      assert.deepEqual(replay.json().debugging.events.duplicates.sort(), ['order-1', 'order-note']);
      assert.equal((await allEvents(service, { client_id: 'order-1' })).length, 1);
      assert.equal((await allEvents(service, { client_id: 'order-note' })).length, 1);
    });

    test('an erased event frees its id', async () => {
      const first = await track(service, payload({ events: [{ type: 'gone', id: 'erase-me' }] }));
      assert.equal((await service.manage('DELETE', `/profile/${first.profile.id}`)).statusCode, 200);
      await track(service, payload({ events: [{ type: 'back', id: 'erase-me' }] }));
      assert.deepEqual(
        (await allEvents(service, { client_id: 'erase-me' })).map((e) => e.type),
        ['back'],
      );
    });
  });
}

describe('event ids that break the payload', () => {
  let service: Service;
  before(async () => {
    service = await startService();
    await service.createSource();
  });
  after(() => service.close());

  test('an id of 129 characters, an empty id, or one that is not a string is a 422 naming it', async () => {
    for (const id of ['x'.repeat(129), '', 1, true, {}, ['a']]) {
      expectFieldError(
        await service.post('/track', payload({ events: [{ type: 'a' }, { type: 'b', id }] })),
        ['events', 1, 'id'],
      );
    }
    expectFieldError(await service.get('/events?client_id='), ['client_id']);
    expectFieldError(await service.get(`/events?client_id=${'c'.repeat(129)}`), ['client_id']);
    // null counts as no id; 128 characters is the longest.
    const res = await track(
      service,
      payload({
        events: [
          { type: 'a', id: null },
          { type: 'b', id: 'y'.repeat(128) },
        ],
        options: debug,
      }),
    );
    assert.equal(res.debugging.events.saved, 2);
    assert.equal((await allEvents(service, { client_id: 'y'.repeat(128) })).length, 1);
  });
});
