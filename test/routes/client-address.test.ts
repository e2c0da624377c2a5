/**
 * The client's address (docs/api.md#client-address): the socket's peer unless TRACK_TRUST_PROXY names
 * the proxies whose X-Forwarded-For the service believes; TRACK_IP_ANONYMIZE.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import type { AppConfig } from '../../src/services.js';
import { payload, startService, type Service } from '../helpers.js';
import { allEvents, expectStatus, type Json } from './support.js';

async function service(t: { after(fn: () => Promise<void>): void }, config: Partial<AppConfig> = {}) {
  const s = await startService(config);
  t.after(() => s.close());
  await s.createSource();
  return s;
}

/** The stored `metadata.ip` of a /track request from `peer` with these headers. */
async function ipOf(s: Service, peer: string, headers: Record<string, string> = {}): Promise<string | null> {
  const sid = `s-${Math.random().toString(36).slice(2)}`;
  const res = await s.app.inject({
    method: 'POST',
    url: '/track',
    remoteAddress: peer,
    headers: { 'content-type': 'application/json', ...headers },
    payload: JSON.stringify(payload({ session: { id: sid } })),
  });
  expectStatus(res, 200);
  const [event] = await allEvents(s, { session_id: sid });
  return (event as Json).metadata.ip;
}

const forged = { 'x-forwarded-for': '203.0.113.9' };

test('by default the socket peer is the client: a forged X-Forwarded-For changes nothing', async (t) => {
  const s = await service(t);
  assert.equal(await ipOf(s, '198.51.100.7'), '198.51.100.7');
  assert.equal(await ipOf(s, '198.51.100.7', forged), '198.51.100.7');
  assert.equal(await ipOf(s, '198.51.100.7', { 'x-forwarded-for': '1.1.1.1, 2.2.2.2' }), '198.51.100.7');
  assert.equal(await ipOf(s, '2001:db8::5', forged), '2001:db8::5');
  // /collect too.
  const res = await s.app.inject({
    method: 'POST',
    url: '/collect/c/src-1',
    remoteAddress: '198.51.100.8',
    headers: forged,
    payload: '{}',
  });
  const event = expectStatus(await s.get(`/event/${expectStatus(res, 200).event.id}`), 200);
  assert.equal(event.metadata.ip, '198.51.100.8');
});

test('TRACK_TRUST_PROXY=yes: the left-most address of X-Forwarded-For', async (t) => {
  const s = await service(t, { trustProxy: true });
  assert.equal(await ipOf(s, '10.0.0.2', { 'x-forwarded-for': '203.0.113.9, 10.0.0.1' }), '203.0.113.9');
  assert.equal(await ipOf(s, '10.0.0.2'), '10.0.0.2', 'no header: the peer');
});

test('TRACK_TRUST_PROXY=N: the N nearest hops are proxies, the client is the next one', async (t) => {
  const one = await service(t, { trustProxy: 1 });
  const header = { 'x-forwarded-for': '192.0.2.1, 203.0.113.9, 10.0.0.1' };
  assert.equal(await ipOf(one, '10.0.0.2', header), '10.0.0.1');
  const two = await service(t, { trustProxy: 2 });
  assert.equal(await ipOf(two, '10.0.0.2', header), '203.0.113.9');
  const many = await service(t, { trustProxy: 10 });
  assert.equal(await ipOf(many, '10.0.0.2', header), '192.0.2.1', 'fewer hops than N: the left-most');
});

test('TRACK_TRUST_PROXY=<list>: the right-most address that is not a trusted proxy', async (t) => {
  const s = await service(t, { trustProxy: ['10.0.0.0/8', '2001:db8::1'] });
  const header = { 'x-forwarded-for': '192.0.2.1, 203.0.113.9, 10.1.2.3' };
  assert.equal(await ipOf(s, '10.0.0.2', header), '203.0.113.9');
  assert.equal(await ipOf(s, '2001:db8::1', header), '203.0.113.9');
  // A peer that is not a trusted proxy is the client, whatever it forwards.
  assert.equal(await ipOf(s, '198.51.100.7', header), '198.51.100.7');
});

test('forwarded garbage is no address: null; hundreds of entries work; ports are dropped', async (t) => {
  const s = await service(t, { trustProxy: true });
  assert.equal(await ipOf(s, '10.0.0.2', { 'x-forwarded-for': '<script>alert(1)</script>' }), null);
  assert.equal(await ipOf(s, '10.0.0.2', { 'x-forwarded-for': 'unknown, 10.0.0.1' }), null);
  assert.equal(await ipOf(s, '10.0.0.2', { 'x-forwarded-for': '203.0.113.9:4711' }), '203.0.113.9');
  assert.equal(await ipOf(s, '10.0.0.2', { 'x-forwarded-for': '[2001:db8::9]:443' }), '2001:db8::9');
  const hops = Array.from({ length: 500 }, (_, i) => `10.${(i >> 8) & 255}.${i & 255}.1`).join(', ');
  assert.equal(await ipOf(s, '10.0.0.2', { 'x-forwarded-for': `198.51.100.1, ${hops}` }), '198.51.100.1');
  const listed = await service(t, { trustProxy: ['10.0.0.0/8'] });
  assert.equal(
    await ipOf(listed, '10.0.0.2', { 'x-forwarded-for': `198.51.100.1, ${hops}` }),
    '198.51.100.1',
  );
  assert.equal(
    await ipOf(listed, '10.0.0.2', { 'x-forwarded-for': ` ,, garbage,${'x'.repeat(2000)}` }),
    null,
  );
});

test('TRACK_IP_ANONYMIZE: the last IPv4 octet or the last 80 IPv6 bits are zeroed, in events and the quarantine', async (t) => {
  const s = await service(t, { ipAnonymize: true });
  assert.equal(await ipOf(s, '198.51.100.77'), '198.51.100.0');
  assert.equal(await ipOf(s, '2001:db8:1:2:3:4:5:6'), '2001:db8:1::');
  assert.equal(await ipOf(s, '::ffff:198.51.100.77'), '::ffff:198.51.100.0');
  await s.manage('POST', '/event/management', {
    event_type: 'strict',
    validation: { json_schema: { 'event@properties': false } },
  });
  const refused = await s.app.inject({
    method: 'POST',
    url: '/track',
    remoteAddress: '198.51.100.77',
    payload: JSON.stringify(payload({ events: [{ type: 'strict' }] })),
  });
  assert.equal(refused.statusCode, 406);
  const [record] = (await s.get('/event/rejected')).json().result as Json[];
  assert.equal(record!.request.ip, '198.51.100.0');
});

test('through a real socket: the peer address, a forged header ignored', async (t) => {
  const s = await service(t);
  await s.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = s.app.server.address() as AddressInfo;
  const sid = 'socket-session';
  const res = await fetch(`http://127.0.0.1:${port}/track`, {
    method: 'POST',
    headers: forged,
    body: JSON.stringify(payload({ session: { id: sid } })),
  });
  assert.equal(res.status, 200);
  const [event] = await allEvents(s, { session_id: sid });
  assert.equal((event as Json).metadata.ip, '127.0.0.1');
});
