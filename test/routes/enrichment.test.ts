/**
 * Enrichment of new sessions (docs/api.md#enrichment): device, OS and browser from the User-Agent,
 * the country from the client address, bots tagged or dropped, TRACK_ENRICH=no.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AppConfig } from '../../src/services.js';
import { payload, startService, type Service } from '../helpers.js';
import { allEvents, expectStatus, type Json } from './support.js';

const UA = {
  chromeWindows:
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
  iphone:
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
  ipad: 'Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1',
  firefoxLinux: 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0',
  googlebot: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
};

async function service(t: { after(fn: () => Promise<void>): void }, config: Partial<AppConfig> = {}) {
  const s = await startService(config);
  t.after(() => s.close());
  await s.createSource();
  return s;
}

/** A first request of a new session from `peer` with this User-Agent; answers the stored session. */
async function sessionOf(
  s: Service,
  userAgent: string | undefined,
  peer = '127.0.0.1',
  sid = fresh(),
): Promise<Json> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (userAgent !== undefined) headers['user-agent'] = userAgent;
  const res = await s.app.inject({
    method: 'POST',
    url: '/track',
    remoteAddress: peer,
    headers,
    payload: JSON.stringify(payload({ session: { id: sid } })),
  });
  expectStatus(res, 200);
  return expectStatus(await s.get(`/session/${sid}`), 200);
}

const fresh = () => `session-${Math.random().toString(36).slice(2)}`;

test('device, os and app from the User-Agent, in Tracardi shape', async (t) => {
  const s = await service(t);
  const pick = (session: Json) => [session.device.type, session.os, session.app];
  assert.deepEqual(pick(await sessionOf(s, UA.chromeWindows)), [
    'desktop',
    { name: 'Windows', version: '10' },
    { name: 'Chrome', version: '126.0.0.0', bot: false },
  ]);
  assert.deepEqual(pick(await sessionOf(s, UA.iphone)), [
    'mobile',
    { name: 'iOS', version: '17.5' },
    { name: 'Mobile Safari', version: '17.5', bot: false },
  ]);
  assert.deepEqual((await sessionOf(s, UA.ipad)).device.type, 'tablet');
  assert.deepEqual(pick(await sessionOf(s, UA.firefoxLinux)), [
    'desktop',
    { name: 'Linux', version: null },
    { name: 'Firefox', version: '128.0', bot: false },
  ]);
  assert.deepEqual(pick(await sessionOf(s, UA.googlebot)), [
    'bot',
    { name: null, version: null },
    { name: null, version: null, bot: true },
  ]);
  assert.deepEqual(pick(await sessionOf(s, '')), [
    'other',
    { name: null, version: null },
    { name: null, version: null, bot: false },
  ]);
  // A 10 kB User-Agent is read by its start only, and stored nowhere.
  const long = await sessionOf(s, `${UA.chromeWindows} ${'x'.repeat(10_000)}`);
  assert.equal(long.app.name, 'Chrome');
  assert.ok(JSON.stringify(long).length < 2000);
});

test('the country of the client address; none for private, loopback and unknown addresses', async (t) => {
  const s = await service(t);
  const country = async (peer: string) =>
    (await sessionOf(s, UA.chromeWindows, peer)).device.geo.country.code;
  assert.equal(await country('8.8.8.8'), 'US');
  assert.equal(await country('81.2.69.142'), 'GB');
  assert.equal(await country('::ffff:8.8.8.8'), 'US');
  assert.equal(await country('2a00:1450:4001:81b::200e'), 'DE');
  for (const peer of ['127.0.0.1', '10.1.2.3', '192.168.0.1', '172.16.5.4', '::1', 'fe80::1', '0.0.0.0']) {
    assert.equal(await country(peer), null, peer);
  }
});

test('with TRACK_IP_ANONYMIZE the country comes from the whole address, the event keeps the anonymised one', async (t) => {
  const s = await service(t, { ipAnonymize: true });
  const sid = fresh();
  const session = await sessionOf(s, UA.iphone, '81.2.69.142', sid);
  assert.equal(session.device.geo.country.code, 'GB');
  const [event] = await allEvents(s, { session_id: sid });
  assert.equal((event as Json).metadata.ip, '81.2.69.0');
});

test('enrichment runs once per session: later requests do not change it', async (t) => {
  const s = await service(t);
  const sid = fresh();
  const first = await sessionOf(s, UA.iphone, '8.8.8.8', sid);
  const second = await sessionOf(s, UA.chromeWindows, '81.2.69.142', sid);
  assert.deepEqual([second.device, second.os, second.app], [first.device, first.os, first.app]);
  assert.equal(second.device.type, 'mobile');
});

test('a session not saved (saveSession false) is not stored, enriched or not', async (t) => {
  const s = await service(t);
  const res = await s.app.inject({
    method: 'POST',
    url: '/track',
    headers: { 'user-agent': UA.iphone },
    payload: JSON.stringify(payload({ session: { id: 'not-saved' }, options: { saveSession: false } })),
  });
  expectStatus(res, 200);
  assert.equal((await s.get('/session/not-saved')).statusCode, 404);
});

test('TRACK_ENRICH=no: sessions without device, os and app', async (t) => {
  const s = await service(t, { enrich: false });
  const session = await sessionOf(s, UA.iphone, '8.8.8.8');
  assert.equal(session.device, undefined);
  assert.equal(session.os, undefined);
  assert.equal(session.app, undefined);
});

test('TRACK_BOTS=drop: a bot is answered 200, nothing is stored, the events are counted as dropped', async (t) => {
  const s = await service(t, { bots: 'drop' });
  const sid = fresh();
  const res = await s.app.inject({
    method: 'POST',
    url: '/track',
    headers: { 'user-agent': UA.googlebot },
    payload: JSON.stringify(
      payload({ session: { id: sid }, events: [{ type: 'a' }, { type: 'b' }], options: { debugger: true } }),
    ),
  });
  const body = expectStatus(res, 200);
  assert.equal(typeof body.profile.id, 'string');
  assert.equal(body.debugging.events.saved, 0);
  assert.equal((await s.get(`/session/${sid}`)).statusCode, 404);
  assert.equal((await s.get(`/profile/${body.profile.id}`)).statusCode, 404);
  const collect = await s.app.inject({
    method: 'POST',
    url: '/collect/c/src-1',
    headers: { 'user-agent': UA.googlebot },
    payload: '{}',
  });
  assert.equal((await s.get(`/event/${expectStatus(collect, 200).event.id}`)).statusCode, 404);
  assert.equal((await allEvents(s)).length, 0);
  const metrics = (await s.get('/metrics')).body;
  assert.match(metrics, /collector_events_total\{outcome="dropped",reason="bot"\} 3/);
  // People are stored as usual.
  const person = await sessionOf(s, UA.chromeWindows);
  assert.equal(person.app.bot, false);
  assert.equal((await allEvents(s)).length, 1);
});

test('TRACK_BOTS=tag (the default): bots are stored, tagged', async (t) => {
  const s = await service(t);
  const session = await sessionOf(s, UA.googlebot);
  assert.equal(session.app.bot, true);
  assert.equal(session.device.type, 'bot');
});
