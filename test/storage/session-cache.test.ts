/**
 * The embedded store's session cache (src/storage/sqlite/session-cache.ts): on only while the
 * process holds its data folder's lock, as the server does, and then every read and write of a
 * session gives what the store holds (docs/architecture.md#the-write-path).
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { SessionRecord } from '../../src/model/records.js';
import { SessionCache } from '../../src/storage/sqlite/session-cache.js';
import { payload, startService, type Service } from '../helpers.js';
import { read, track, type Json } from '../routes/support.js';

const record = (id: string, context: Json = {}): SessionRecord => ({
  id,
  profile: { id: 'p' },
  metadata: { time: { insert: '2026-01-01T00:00:00.000Z', update: '2026-01-01T00:00:00.000Z' } },
  context,
  properties: {},
});

describe('SessionCache', () => {
  test('answers what was written, with the latest request merged, and follows versions', () => {
    const cache = new SessionCache();
    cache.written(record('a'), null, 100);
    assert.equal(cache.get('a')?.version, 1);
    cache.touched('a', '2026-01-02T00:00:00.000Z');
    cache.touched('a', '2026-01-01T12:00:00.000Z');
    assert.equal(cache.get('a')?.record.metadata.time.update, '2026-01-02T00:00:00.000Z');
    cache.written(record('a', { x: 1 }), 1, 100);
    assert.deepEqual(cache.get('a')?.record.context, { x: 1 });
    assert.equal(cache.get('a')?.version, 2);
    // A write at a version the cache does not hold: read again.
    cache.written(record('a'), 7, 100);
    assert.equal(cache.get('a'), undefined);
  });

  test('a read answered after a change of the session is not kept', () => {
    const cache = new SessionCache();
    const token = cache.reads('a');
    cache.touched('a', '2026-01-02T00:00:00.000Z');
    cache.read('a', token, { record: record('a'), version: 3, latest: null, chars: 100 });
    assert.equal(cache.get('a'), undefined);
    const again = cache.reads('a');
    cache.read('a', again, { record: record('a'), version: 3, latest: null, chars: 100 });
    assert.equal(cache.get('a')?.version, 3);
  });

  test('keeps the most recently used within its bounds', () => {
    const cache = new SessionCache({ maxEntries: 2, maxBytes: 1_000 });
    cache.written(record('a'), null, 100);
    cache.written(record('b'), null, 100);
    cache.get('a');
    cache.written(record('c'), null, 100);
    assert.equal(cache.size, 2);
    assert.ok(cache.get('a') && cache.get('c'));
    assert.equal(cache.get('b'), undefined);
    cache.written(record('big'), null, 600); // 1,200 bytes: over the budget alone
    assert.equal(cache.get('big'), undefined);
  });
});

describe('a service holding its data folder (session cache on)', () => {
  let service: Service;
  beforeEach(async () => {
    service = await startService({}, { lockDataDir: true });
    await service.createSource();
  });
  afterEach(() => service.close());

  test('returning visits keep their profile; the session shows its latest request', async () => {
    const first = await track(service, payload());
    const sid = first.session.id as string;
    let latest = '';
    for (let i = 0; i < 3; i++) {
      const again = await track(
        service,
        payload({ session: { id: sid }, profile: { id: first.profile.id } }),
      );
      assert.equal(again.profile.id, first.profile.id);
      const session = await read(service, `/session/${sid}`);
      assert.ok(session.metadata.time.update > latest, 'the update time moves on with each request');
      latest = session.metadata.time.update;
    }
    const profile = await read(service, `/profile/${first.profile.id}`);
    assert.equal(profile.stats.visits, 1);
  });

  test('context changes of a known session are stored and read back', async () => {
    const sid = `session-${Math.random().toString(36).slice(2)}`;
    await track(service, payload({ session: { id: sid }, context: { a: 1 } }));
    await track(service, payload({ session: { id: sid }, context: { b: 2 } }));
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        track(service, payload({ session: { id: sid }, context: { [`k${i}`]: i } })),
      ),
    );
    const session = await read(service, `/session/${sid}`);
    assert.deepEqual(session.context, {
      a: 1,
      b: 2,
      ...Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`k${i}`, i])),
    });
  });

  test('after its profile is erased, a known session id starts again with a new profile', async () => {
    const first = await track(service, payload());
    const sid = first.session.id as string;
    await track(service, payload({ session: { id: sid } }));
    const erased = await service.manage('DELETE', `/profile/${first.profile.id}`);
    assert.equal(erased.statusCode, 200);
    const again = await track(service, payload({ session: { id: sid }, profile: { id: first.profile.id } }));
    assert.notEqual(again.profile.id, first.profile.id);
    assert.deepEqual((await read(service, `/session/${sid}`)).profile, { id: again.profile.id });
  });

  test('after a merge, the merged profile’s sessions answer the survivor', async () => {
    await service.manage('POST', '/profile-rule', {
      id: 'identify',
      event_type: 'identify',
      operations: [{ op: 'identify', type: 'email', from: 'properties.email' }],
    });
    const email = { type: 'identify', properties: { email: 'ana@example.com' } };
    const a = await track(service, payload({ events: [email] }));
    const b = await track(service, payload());
    const bSession = b.session.id as string;
    // b's session is cached; the identity then merges b's profile into a's.
    await track(service, payload({ session: { id: bSession }, events: [email] }));
    const next = await track(service, payload({ session: { id: bSession } }));
    assert.equal(next.profile.id, a.profile.id);
    assert.deepEqual((await read(service, `/session/${bSession}`)).profile, { id: a.profile.id });
  });
});
