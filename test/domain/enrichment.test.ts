/** The parts of enrichment and event time that no HTTP request can reach one by one. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { anonymizeAddress, publicAddress } from '../../src/domain/enrichment/address.js';
import { USER_AGENT_READ, UserAgents } from '../../src/domain/enrichment/user-agent.js';
import { Enricher } from '../../src/domain/enrichment/enricher.js';
import { MAX_TIME_MS, MIN_TIME_MS, parseTime } from '../../src/model/time.js';

test('the User-Agent cache keeps at most its size, whatever is sent', () => {
  const agents = new UserAgents(100);
  for (let i = 0; i < 5000; i++) agents.describe(`Mozilla/5.0 (X11; Linux x86_64) Unique/${i}`);
  assert.equal(agents.cached, 100);
  // Long values are keyed by their start: 1,000 values differing past it are one entry.
  const long = new UserAgents(100);
  for (let i = 0; i < 1000; i++) long.describe(`${'a'.repeat(USER_AGENT_READ)}${i}`);
  assert.equal(long.cached, 1);
  assert.equal(long.describe(null).type, 'other');
});

test('addresses: anonymised per family; only public unicast addresses are looked up', () => {
  assert.equal(anonymizeAddress('203.0.113.77'), '203.0.113.0');
  assert.equal(anonymizeAddress('2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff'), '2001:db8:aaaa::');
  assert.equal(anonymizeAddress('::ffff:203.0.113.77'), '::ffff:203.0.113.0');
  assert.equal(anonymizeAddress('not an address'), null);
  assert.equal(anonymizeAddress(null), null);
  assert.equal(publicAddress('8.8.8.8'), '8.8.8.8');
  assert.equal(publicAddress('::ffff:8.8.8.8'), '8.8.8.8');
  for (const address of ['127.0.0.1', '10.0.0.1', '::1', 'fe80::1', '100.64.0.1', 'garbage', null]) {
    assert.equal(publicAddress(address), null, String(address));
  }
});

test('parseTime reads RFC 3339 date-times with an offset, in years 0001 to 9999', () => {
  assert.equal(parseTime('2026-11-23T20:16:01.741Z'), Date.parse('2026-11-23T20:16:01.741Z'));
  assert.equal(parseTime('2026-11-23T21:16:01.741+01:00'), Date.parse('2026-11-23T20:16:01.741Z'));
  assert.equal(parseTime('2024-02-29t00:00:00z'), Date.parse('2024-02-29T00:00:00Z'));
  assert.equal(parseTime('2026-11-23 20:16:01Z'), Date.parse('2026-11-23T20:16:01Z'));
  assert.equal(parseTime('0001-01-01T00:00:00Z'), MIN_TIME_MS);
  assert.equal(parseTime('9999-12-31T23:59:59.999Z'), MAX_TIME_MS);
  assert.equal(parseTime('0050-06-01T00:00:00Z'), Date.parse('0050-06-01T00:00:00Z'), 'no 1900 + year');
  for (const bad of [
    '2023-02-29T00:00:00Z',
    '0001-01-01T00:00:00+00:01',
    '9999-12-31T23:59:59-00:01',
    '2026-11-23T20:16:01',
    '2026-11-23T20:16Z',
    ' 2026-11-23T20:16:01Z',
  ]) {
    assert.equal(parseTime(bad), null, bad);
  }
});

test('parseTime answers the same read again, whatever came between (its recent answers are kept)', () => {
  const times = Array.from({ length: 10 }, (_, i) => `2026-11-2${i}T00:00:00.00${i}Z`);
  for (let round = 0; round < 3; round++) {
    for (const [i, text] of times.entries()) {
      assert.equal(parseTime(text), Date.parse(`2026-11-2${i}T00:00:00.00${i}Z`), text);
      assert.equal(parseTime(text), Date.parse(text), `${text} again`);
      assert.equal(parseTime(`${text.slice(0, 5)}13${text.slice(7)}`), null, 'month 13');
    }
  }
});

test('sessions of one User-Agent and country share one frozen value; other countries get their own', () => {
  const enricher = new Enricher({ enrich: true, bots: 'tag', anonymize: false });
  const agent =
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';
  const a = enricher.session(agent, '127.0.0.1')!;
  const b = enricher.session(agent, '10.0.0.1')!;
  assert.equal(a, b, 'both without a country');
  assert.ok(Object.isFrozen(a) && Object.isFrozen(a.device.geo.country) && Object.isFrozen(a.os));
  assert.equal(a.device.type, 'desktop');
  assert.equal(a.app.name, 'Chrome');
  const other = enricher.session(agent, '8.8.8.8')!;
  assert.notEqual(other.device.geo.country.code, null);
  assert.deepEqual({ ...other, device: a.device }, a);
  assert.equal(
    new Enricher({ enrich: false, bots: 'tag', anonymize: false }).session(agent, '8.8.8.8'),
    null,
  );
});
