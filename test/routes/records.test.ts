/** Stored records: reads, GET /events filters and cursor paging, DELETE /profile (docs/api.md #conventions, #records). */
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { payload, startService, type Service } from '../helpers.js';
import {
  allEvents,
  expectError,
  expectFieldError,
  expectStatus,
  read,
  statusOf,
  track,
  type Json,
} from './support.js';

const fresh = () => `session-${Math.random().toString(36).slice(2)}`;

/** Pages through GET /events with the given limit; returns the pages. */
async function pages(service: Service, limit: number, query: Record<string, string> = {}): Promise<Json[][]> {
  const result: Json[][] = [];
  let cursor: string | null = null;
  do {
    const params = new URLSearchParams({ ...query, limit: String(limit) });
    if (cursor) params.set('cursor', cursor);
    const page = await read(service, `/events?${params}`);
    assert.deepEqual(Object.keys(page).sort(), ['next', 'result']);
    result.push(page.result);
    cursor = page.next;
    assert.ok(result.length < 500, 'paging does not end');
  } while (cursor);
  return result;
}

/** Newest first by metadata.time.insert. */
function assertNewestFirst(events: Json[]): void {
  for (let i = 1; i < events.length; i++) {
    const previous = events[i - 1]!.metadata.time.insert as string;
    const current = events[i]!.metadata.time.insert as string;
    assert.ok(previous >= current, `event ${i} (${current}) is newer than event ${i - 1} (${previous})`);
  }
}

describe('single records', () => {
  let service: Service;
  beforeEach(async () => {
    service = await startService();
    await service.createSource();
  });
  afterEach(() => service.close());

  test('unknown event, session and profile are 404 with a detail', async () => {
    for (const url of ['/event/nope', '/session/nope', '/profile/nope']) {
      expectError(await service.get(url), 404);
    }
    expectError(await service.manage('DELETE', '/profile/nope'), 404);
  });

  test('GET /event/{id} returns what GET /events lists', async () => {
    await track(
      service,
      payload({ events: [{ type: 'a', properties: { deep: { list: [1, { x: null }] } } }] }),
    );
    const [listed] = await allEvents(service);
    assert.deepEqual(await read(service, `/event/${listed!.id}`), listed);
    assert.deepEqual(listed!.properties, { deep: { list: [1, { x: null }] } });
  });
});

describe('GET /events', () => {
  let service: Service;
  const sessions = [fresh(), fresh()];
  let profiles: string[] = [];
  before(async () => {
    service = await startService();
    await service.createSource();
    await service.createSource({ id: 'src-2' });
    const a = await track(
      service,
      payload({ session: { id: sessions[0] }, events: [{ type: 'view' }, { type: 'buy' }] }),
    );
    const b = await track(
      service,
      payload({ source: { id: 'src-2' }, session: { id: sessions[1] }, events: [{ type: 'view' }] }),
    );
    await track(service, payload({ session: { id: sessions[0] }, events: [{ type: 'view' }] }));
    expectStatus(await service.post('/collect/view/src-2', { c: 1 }), 200);
    profiles = [a.profile.id, b.profile.id];
  });
  after(() => service.close());

  test('lists every event newest first with next null on the last page', async () => {
    const page = await read(service, '/events');
    assert.equal(page.result.length, 5);
    assert.equal(page.next, null);
    assertNewestFirst(page.result);
  });

  test('filters by profile_id, session_id, type and source_id, alone and together', async () => {
    const count = async (query: Record<string, string>) => (await allEvents(service, query)).length;
    assert.equal(await count({ profile_id: profiles[0]! }), 3);
    assert.equal(await count({ profile_id: profiles[1]! }), 1);
    assert.equal(await count({ session_id: sessions[0]! }), 3);
    assert.equal(await count({ session_id: sessions[1]! }), 1);
    assert.equal(await count({ type: 'view' }), 4);
    assert.equal(await count({ type: 'buy' }), 1);
    assert.equal(await count({ type: 'View' }), 0);
    assert.equal(await count({ source_id: 'src-1' }), 3);
    assert.equal(await count({ source_id: 'src-2' }), 2);
    assert.equal(await count({ source_id: 'src-2', type: 'view', session_id: sessions[1]! }), 1);
    assert.equal(await count({ profile_id: profiles[0]!, type: 'view' }), 2);
    assert.equal(await count({ profile_id: profiles[0]!, source_id: 'src-2' }), 0);
    assert.equal(await count({ profile_id: 'nobody' }), 0);
    for (const event of await allEvents(service, { profile_id: profiles[0]!, type: 'view' })) {
      assert.deepEqual(event.profile, { id: profiles[0] });
      assert.equal(event.type, 'view');
    }
  });

  test('limit above 1000 or below 1 is a 422 naming limit', async () => {
    expectFieldError(await service.get('/events?limit=1001'), ['limit']);
    expectFieldError(await service.get('/events?limit=0'), ['limit']);
    expectFieldError(await service.get('/events?limit=ten'), ['limit']);
    expectStatus(await service.get('/events?limit=1000'), 200);
  });

  test('a cursor the service did not issue is a 422', async () => {
    const first = await read(service, '/events?limit=2');
    const issued = first.next as string;
    assert.equal(typeof issued, 'string');
    const [body, signature] = issued.split('.');
    const forged = [
      'garbage',
      '',
      Buffer.from(JSON.stringify(['2999-01-01T00:00:00.000Z', 'zzz'])).toString('base64url'),
      `${Buffer.from(JSON.stringify(['2999-01-01T00:00:00.000Z', 'zzz'])).toString('base64url')}.${signature}`,
      `${body}.${signature}x`,
      `${body}x.${signature}`,
      `${issued}.extra`,
      'x'.repeat(2000),
    ];
    for (const cursor of forged) {
      const res = await service.get(`/events?limit=2&cursor=${encodeURIComponent(cursor)}`);
      if (cursor === '') {
        // An empty cursor may count as no cursor; it must never be an error of another kind.
        assert.ok([200, 422].includes(res.statusCode), `empty cursor: ${res.statusCode}`);
        continue;
      }
      expectError(res, 422);
    }
    expectStatus(await service.get(`/events?limit=2&cursor=${encodeURIComponent(issued)}`), 200);
  });

  test('a cursor issued by a service with another token is refused', async () => {
    const issued = (await read(service, '/events?limit=1')).next as string;
    const other = await startService({ dataDir: service.dataDir, apiToken: 'another-token' });
    try {
      const res = await other.app.inject({
        method: 'GET',
        url: `/events?limit=1&cursor=${encodeURIComponent(issued)}`,
        headers: { authorization: 'Bearer another-token' },
      });
      expectError(res, 422);
    } finally {
      await other.close();
    }
  });
});

describe('GET /events paging', () => {
  let service: Service;
  let expected: string[] = [];
  before(async () => {
    service = await startService();
    await service.createSource();
    // One request: every event shares one insert time.
    await track(
      service,
      payload({
        events: Array.from({ length: 237 }, (_, i) => ({ type: i % 3 === 0 ? 'x' : 'y', properties: { i } })),
      }),
    );
    // More requests, more times and more ties.
    for (let r = 0; r < 4; r++) {
      await track(
        service,
        payload({ events: Array.from({ length: 15 }, (_, i) => ({ type: 'z', properties: { r, i } })) }),
      );
    }
    const one = await read(service, '/events?limit=1000');
    assert.equal(one.next, null);
    expected = one.result.map((e: Json) => e.id);
    assert.equal(expected.length, 297);
    assert.equal(new Set(expected).size, 297);
    assertNewestFirst(one.result);
  });
  after(() => service.close());

  for (const limit of [1, 7, 50, 100, 296, 297, 298]) {
    test(`limit ${limit}: pages in the same order as one page, no duplicates, no gaps`, async () => {
      const all = await pages(service, limit);
      const ids = all.flat().map((e) => e.id);
      assert.deepEqual(ids, expected);
      for (const page of all.slice(0, -1)) assert.equal(page.length, limit);
      assert.ok(all[all.length - 1]!.length >= 1, 'no empty last page');
    });
  }

  test('the default limit is 50', async () => {
    const page = await read(service, '/events');
    assert.equal(page.result.length, 50);
    assert.equal(typeof page.next, 'string');
    assert.deepEqual(
      page.result.map((e: Json) => e.id),
      expected.slice(0, 50),
    );
  });

  test('paging with a filter keeps to the filter', async () => {
    const all = (await pages(service, 13, { type: 'x' })).flat();
    assert.equal(all.length, 79);
    assert.ok(all.every((e) => e.type === 'x'));
    assert.deepEqual(
      all.map((e) => e.id),
      expected.filter((id) => all.some((e) => e.id === id)),
    );
    assert.equal(new Set(all.map((e) => e.id)).size, 79);
  });

  test('the same cursor gives the same page again, and events added later do not shift older pages', async () => {
    const first = await read(service, '/events?limit=10');
    const second = await read(service, `/events?limit=10&cursor=${encodeURIComponent(first.next)}`);
    await track(service, payload({ events: [{ type: 'late' }] }));
    const again = await read(service, `/events?limit=10&cursor=${encodeURIComponent(first.next)}`);
    assert.deepEqual(again, second);
    const newest = await read(service, '/events?limit=1');
    assert.equal(newest.result[0].type, 'late');
  });
});

describe('DELETE /profile/{id}', () => {
  let service: Service;
  beforeEach(async () => {
    service = await startService();
    await service.createSource();
  });
  afterEach(() => service.close());

  test('erases the profile, its sessions and their events, and answers the counts', async () => {
    const s1 = fresh();
    const s2 = fresh();
    const first = await track(
      service,
      payload({ session: { id: s1 }, events: [{ type: 'a' }, { type: 'b' }] }),
    );
    const pid = first.profile.id as string;
    await track(service, payload({ session: { id: s1 }, events: [{ type: 'c' }] }));
    await track(service, payload({ session: { id: s2 }, profile: { id: pid }, events: [{ type: 'd' }] }));
    // Someone else's records stay.
    const other = await track(service, payload({ events: [{ type: 'other' }] }));
    expectStatus(await service.post('/collect/anon/src-1', {}), 200);

    const res = expectStatus(await service.manage('DELETE', `/profile/${pid}`), 200);
    assert.deepEqual(res, {
      deleted: { profiles: 1, sessions: 2, events: 4, identities: 0, aliases: 0, rejected: 0 },
    });

    assert.equal(await statusOf(service, `/profile/${pid}`), 404);
    assert.equal(await statusOf(service, `/session/${s1}`), 404);
    assert.equal(await statusOf(service, `/session/${s2}`), 404);
    assert.deepEqual(await allEvents(service, { profile_id: pid }), []);
    assert.deepEqual(await allEvents(service, { session_id: s1 }), []);
    const left = await allEvents(service);
    assert.deepEqual(left.map((e) => e.type).sort(), ['anon', 'other']);
    assert.equal(await statusOf(service, `/profile/${other.profile.id}`), 200);
    assert.equal(await statusOf(service, `/session/${other.session.id}`), 200);

    expectError(await service.manage('DELETE', `/profile/${pid}`), 404);
  });

  test('also erases the events stored without a saved session', async () => {
    const first = await track(
      service,
      payload({ options: { saveSession: false }, events: [{ type: 'a' }, { type: 'b' }] }),
    );
    const res = expectStatus(await service.manage('DELETE', `/profile/${first.profile.id}`), 200);
    assert.deepEqual(res, {
      deleted: { profiles: 1, sessions: 0, events: 2, identities: 0, aliases: 0, rejected: 0 },
    });
    assert.deepEqual(await allEvents(service), []);
  });

  test('the erasure is durable: a new process on the same data folder sees nothing of it', async () => {
    const first = await track(service, payload());
    expectStatus(await service.manage('DELETE', `/profile/${first.profile.id}`), 200);
    const again = await startService({ dataDir: service.dataDir });
    try {
      assert.equal(await statusOf(again, `/profile/${first.profile.id}`), 404);
      assert.equal(await statusOf(again, `/session/${first.session.id}`), 404);
      assert.deepEqual(await allEvents(again), []);
    } finally {
      await again.close();
    }
  });
});
