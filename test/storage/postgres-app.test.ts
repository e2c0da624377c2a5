/** The real app on PostgreSQL, selected by `databaseUrl` as DATABASE_URL selects it in production. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { PostgresStore } from '../../src/storage/postgres/store.js';
import { payload, startService, type Json } from '../helpers.js';
import { testSchema, usePostgres } from '../support/postgres.js';
import { TcpProxy } from '../support/tcp-proxy.js';

usePostgres();

/** Bodies recorded from Tracardi's browser tracker and Python SDK. */
const fixture = (name: string): Json =>
  JSON.parse(readFileSync(new URL(`../fixtures/tracker/${name}`, import.meta.url), 'utf8')) as Json;

function body(res: LightMyRequestResponse, status = 200): Json {
  assert.equal(
    res.statusCode,
    status,
    `expected ${status}, got ${res.statusCode}: ${res.body.slice(0, 500)}`,
  );
  return res.json() as Json;
}

test('tracker payloads are stored in PostgreSQL and read back', async (t) => {
  const service = await startService({ databaseUrl: await testSchema() });
  t.after(() => service.close());
  assert.deepEqual(body(await service.app.inject({ method: 'GET', url: '/health' })), { status: 'ok' });
  await service.createSource();

  const browser = fixture('tracker-first-visit.json');
  const first = body(await service.post('/track', browser));
  const profileId = first.profile.id as string;
  const sessionId = browser.session.id as string;
  assert.equal(first.session.id, sessionId);
  assert.equal(typeof profileId, 'string');

  const events = body(await service.get(`/events?session_id=${sessionId}`));
  assert.deepEqual(events.result.map((e: Json) => e.type).sort(), ['page-view', 'purchase-order']);
  assert.equal(events.next, null);
  for (const e of events.result as Json[]) {
    assert.equal(e.profile.id, profileId);
    assert.equal(e.session.id, sessionId);
    assert.match(e.metadata.time.insert, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.deepEqual(body(await service.get(`/event/${e.id}`)), e);
  }
  const purchase = (events.result as Json[]).find((e) => e.type === 'purchase-order')!;
  assert.deepEqual(purchase.properties, { price: 13.45 });
  assert.equal(purchase.context.page.path, '/tracker/test.html');
  assert.equal(purchase.context.browser.local.device.platform, 'Linux x86_64');

  const profile = body(await service.get(`/profile/${profileId}`));
  assert.equal(profile.stats.visits, 1);
  assert.equal(body(await service.get(`/session/${sessionId}`)).profile.id, profileId);

  // The same session again: the profile bound to it wins and is not visited again.
  const again = body(await service.post('/track', { ...browser, profile: { id: 'someone-else' } }));
  assert.equal(again.profile.id, profileId);
  assert.equal(body(await service.get(`/profile/${profileId}`)).stats.visits, 1);

  const sdk = fixture('python-sdk.json');
  const third = body(await service.post('/track', sdk));
  assert.equal(third.session.id, sdk.session.id);
  const sdkEvents = body(await service.get(`/events?profile_id=${third.profile.id}`)).result as Json[];
  assert.deepEqual(
    sdkEvents.map((e) => [e.type, e.properties]),
    [['event-1', { data: 1 }]],
  );

  // Newest first, paged with the cursor.
  const page1 = body(await service.get('/events?limit=3'));
  assert.equal(page1.result.length, 3);
  const page2 = body(await service.get(`/events?limit=3&cursor=${encodeURIComponent(page1.next)}`));
  const all = [...page1.result, ...page2.result] as Json[];
  assert.equal(all.length, 5);
  assert.equal(new Set(all.map((e) => e.id)).size, 5);
  const times = all.map((e) => e.metadata.time.insert as string);
  assert.deepEqual([...times].sort().reverse(), times);

  const erased = body(await service.manage('DELETE', `/profile/${profileId}`));
  assert.deepEqual(erased, {
    deleted: { profiles: 1, sessions: 1, events: 4, identities: 0, aliases: 0, rejected: 0 },
  });
  body(await service.get(`/profile/${profileId}`), 404);
});

test('two collectors on one database: concurrent first requests of a session make one session and one profile', async (t) => {
  const url = await testSchema();
  const a = await startService({ databaseUrl: url });
  t.after(() => a.close());
  const b = await startService({ databaseUrl: url });
  t.after(() => b.close());
  await a.createSource();

  for (let round = 0; round < 5; round++) {
    const request = payload({ session: { id: `shared-${round}` } });
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).post('/track', request)),
    );
    const profiles = new Set(answers.map((res) => body(res).profile.id as string));
    assert.equal(profiles.size, 1, `round ${round}: ${[...profiles].join(', ')}`);
    const [profileId] = [...profiles];
    assert.equal(body(await a.get(`/session/shared-${round}`)).profile.id, profileId);
    assert.equal(body(await b.get(`/profile/${profileId}`)).stats.visits, 1);
    assert.equal(body(await b.get(`/events?session_id=shared-${round}`)).result.length, 8);
  }
});

test('the database going away answers 503 with Retry-After; the service recovers when it is back', async (t) => {
  const { proxy, url } = await TcpProxy.in(await testSchema());
  t.after(() => proxy.close());
  const store = new PostgresStore({ url, writeQueueLimit: 1000, connectTimeoutMs: 1000 });
  const service = await startService({}, { store });
  t.after(() => service.close());
  await service.createSource();
  body(await service.post('/track', payload()));

  await proxy.down();
  for (const res of [
    await service.app.inject({ method: 'GET', url: '/health' }),
    await service.post('/track', payload()),
    await service.get('/events'),
  ]) {
    assert.equal(res.statusCode, 503, res.body);
    assert.ok(Number(res.headers['retry-after']) >= 0, `Retry-After: ${res.headers['retry-after']}`);
    assert.equal(typeof res.json().detail, 'string');
  }

  await proxy.up();
  assert.equal((await service.app.inject({ method: 'GET', url: '/health' })).statusCode, 200);
  body(await service.post('/track', payload()));
  assert.equal(body(await service.get('/events')).result.length, 2);
});
