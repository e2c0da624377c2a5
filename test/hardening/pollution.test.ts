/**
 * Prototype pollution and hostile strings (docs/api.md #conventions, #post-track, #records, #errors).
 * - `__proto__` and `constructor.prototype` keys anywhere in a body (sent as raw JSON text, since
 *   JSON.stringify drops `__proto__`) never reach a prototype, never act as fields or options, answer
 *   200 or 4xx (never 5xx), and are stored and read back as literal own keys.
 * - SQL fragments, control characters, lone surrogates, bidi marks, emoji and long unicode in ids,
 *   types, properties and context are stored and read back exactly as sent.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AUTH, startService, type Service } from '../helpers.js';
import { allEvents, answerOf, assertError, expectStatus, prototypeKeys, type Json } from './support.js';

const hasOwn = (value: unknown, key: string) =>
  value !== null && typeof value === 'object' && Object.prototype.hasOwnProperty.call(value, key);

/** The hostile object of the tests, as JSON text: both classic pollution keys. */
const HOSTILE = '{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}}}';
const HOSTILE_VALUE = JSON.parse(HOSTILE) as Json;

function assertNotPolluted(snapshot: string): void {
  assert.equal(({} as Json).polluted, undefined);
  assert.equal(([] as unknown as Json).polluted, undefined);
  assert.equal(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted'), false);
  assert.equal(prototypeKeys(), snapshot);
}

/** A raw /track body with the given JSON fragments spliced in (each a `"key": value` text or ''). */
function rawTrack(
  parts: {
    top?: string;
    source?: string;
    session?: string;
    sessionId?: string;
    profile?: string;
    context?: string;
    properties?: string;
    options?: string;
    events?: string;
  } = {},
): string {
  const session =
    parts.session ?? `{"id":${JSON.stringify(parts.sessionId ?? `pollution-${Math.random()}`)}}`;
  const fields = [
    parts.top,
    `"source":${parts.source ?? '{"id":"src-1"}'}`,
    `"session":${session}`,
    parts.profile === undefined ? undefined : `"profile":${parts.profile}`,
    parts.context === undefined ? undefined : `"context":${parts.context}`,
    parts.properties === undefined ? undefined : `"properties":${parts.properties}`,
    `"options":${parts.options ?? '{"debugger":true}'}`,
    `"events":${parts.events ?? '[{"type":"page-view","properties":{"path":"/"}}]'}`,
  ];
  return `{${fields.filter((f) => f !== undefined).join(',')}}`;
}

describe('prototype pollution', () => {
  let service: Service;
  let snapshot: string;
  before(async () => {
    snapshot = prototypeKeys();
    service = await startService();
    await service.createSource();
  });
  after(() => {
    assertNotPolluted(snapshot);
    return service.close();
  });

  /** POSTs a raw body; asserts no 5xx and no pollution; returns the response. */
  async function send(url: string, body: string, headers: Record<string, string> = {}) {
    const res = await service.post(url, body, headers);
    assert.ok(res.statusCode < 500, `${url}: ${res.statusCode} ${res.body.slice(0, 300)}`);
    assertNotPolluted(snapshot);
    return res;
  }

  async function storedEvents(res: { json(): unknown }): Promise<Json[]> {
    const ids = (res.json() as Json).debugging.events.ids as string[];
    return Promise.all(ids.map(async (id) => expectStatus(await service.get(`/event/${id}`), 200)));
  }

  test('keys at the top level of /track are ignored', async () => {
    const res = await send('/track', rawTrack({ top: HOSTILE.slice(1, -1) }));
    const [event] = await storedEvents(res);
    assert.equal(event!.type, 'page-view');
    assert.ok(!hasOwn(event, 'polluted'));
  });

  test('event properties keep __proto__ and constructor as literal own keys', async () => {
    const res = await send('/track', rawTrack({ events: `[{"type":"a","properties":${HOSTILE}}]` }));
    const [event] = await storedEvents(res);
    assert.ok(hasOwn(event!.properties, '__proto__'));
    assert.ok(hasOwn(event!.properties, 'constructor'));
    assert.deepEqual(event!.properties, HOSTILE_VALUE);
    assert.deepEqual(Object.keys(event!.properties), ['__proto__', 'constructor']);
    // The list endpoint serializes the same record.
    const listed = await allEvents(service, { session_id: event!.session.id });
    assert.deepEqual(listed[0]!.properties, HOSTILE_VALUE);
  });

  test('nested deep inside event properties and context', async () => {
    const nested = `{"a":{"b":[{"c":${HOSTILE}}]}}`;
    const res = await send(
      '/track',
      rawTrack({ events: `[{"type":"a","properties":${nested},"context":${nested}}]` }),
    );
    const [event] = await storedEvents(res);
    const expected = JSON.parse(nested) as Json;
    assert.deepEqual(event!.properties, expected);
    assert.deepEqual(event!.context, expected);
    assert.ok(hasOwn(event!.properties.a.b[0].c, '__proto__'));
  });

  test('top-level context and properties reach the session and the events as own keys', async () => {
    const sessionId = 'pollution-session-merge';
    const res = await send(
      '/track',
      rawTrack({
        sessionId,
        context: HOSTILE,
        properties: HOSTILE,
        events: `[{"type":"a","context":{"__proto__":{"other":1},"constructor":"plain"}},{"type":"b"}]`,
      }),
    );
    const [first, second] = await storedEvents(res);
    // The event's own keys win over the top-level context, nested objects merge.
    assert.deepEqual(
      first!.context,
      JSON.parse('{"__proto__":{"polluted":"yes","other":1},"constructor":"plain"}'),
    );
    assert.ok(hasOwn(first!.context, '__proto__'));
    assert.deepEqual(second!.context, HOSTILE_VALUE);
    const session = expectStatus(await service.get(`/session/${sessionId}`), 200);
    assert.deepEqual(session.context, HOSTILE_VALUE);
    assert.deepEqual(session.properties, HOSTILE_VALUE);
    assert.ok(hasOwn(session.context, '__proto__'));

    // A second request on the known session merges into the stored objects.
    await send('/track', rawTrack({ sessionId, context: '{"__proto__":{"second":true}}' }));
    const merged = expectStatus(await service.get(`/session/${sessionId}`), 200);
    assert.deepEqual(merged.context.__proto__, { polluted: 'yes', second: true });
    assert.ok(hasOwn(merged.context, '__proto__'));
  });

  test('keys named like Object.prototype methods are plain data', async () => {
    const methods =
      '{"hasOwnProperty":1,"toString":"x","valueOf":null,"isPrototypeOf":[],"propertyIsEnumerable":{}}';
    const res = await send(
      '/track',
      rawTrack({
        context: methods,
        properties: methods,
        events: `[{"type":"a","properties":${methods},"context":${methods}}]`,
      }),
    );
    const [event] = await storedEvents(res);
    assert.deepEqual(event!.properties, JSON.parse(methods));
    assert.deepEqual(event!.context, JSON.parse(methods));
  });

  test('options inherited through __proto__ are not options', async () => {
    const res = await send(
      '/track',
      rawTrack({ options: '{"debugger":true,"__proto__":{"saveEvents":false,"profile":true}}' }),
    );
    const body = res.json() as Json;
    assert.equal(body.debugging.events.saved, 1);
    assert.deepEqual(Object.keys(body.profile), ['id']);
    const res2 = await send('/track', rawTrack({ options: '{"__proto__":{"debugger":true}}' }));
    assert.equal(res2.statusCode, 200);
    assert.equal((res2.json() as Json).debugging, undefined);
    const res3 = await send(
      '/track',
      rawTrack({
        events:
          '[{"type":"a","options":{"__proto__":{"save":false}}},{"type":"b","options":{"constructor":{"prototype":{"save":false}}}}]',
      }),
    );
    assert.equal((res3.json() as Json).debugging.events.saved, 2);
  });

  test('required fields given only through __proto__ are missing (422)', async () => {
    const cases: [string, string][] = [
      [rawTrack({ source: '{"__proto__":{"id":"src-1"}}' }), 'source'],
      [rawTrack({ session: '{"__proto__":{"id":"s-1"}}' }), 'session'],
      [rawTrack({ events: '[{"__proto__":{"type":"a"}}]' }), 'events'],
      [`{"__proto__":{"source":{"id":"src-1"},"session":{"id":"s-2"},"events":[{"type":"a"}]}}`, 'body'],
    ];
    for (const [body, what] of cases) assertError(answerOf(await send('/track', body)), 422, what);
  });

  test('ids inherited through __proto__ are not used', async () => {
    const known = (await send('/track', rawTrack())).json() as Json;
    const res = await send(
      '/track',
      rawTrack({ profile: `{"__proto__":{"id":${JSON.stringify(known.profile.id)}}}` }),
    );
    assert.notEqual((res.json() as Json).profile.id, known.profile.id);
    const res2 = await send(
      '/track',
      rawTrack({
        session: '{"id":"own-session","__proto__":{"id":"other"}}',
        source: '{"id":"src-1","__proto__":{"id":"x"}}',
      }),
    );
    const [event] = await storedEvents(res2);
    assert.deepEqual(event!.session, { id: 'own-session' });
    assert.deepEqual(event!.source, { id: 'src-1' });
  });

  test('profile_less requests and /collect keep the keys too', async () => {
    const res = await send(
      '/track?profile_less=true',
      rawTrack({ events: `[{"type":"a","properties":${HOSTILE}}]` }),
    );
    const [event] = await storedEvents(res);
    assert.deepEqual(event!.properties, HOSTILE_VALUE);
    const collected = await send('/collect/pollution/src-1', HOSTILE);
    const id = (collected.json() as Json).event.id as string;
    const stored = expectStatus(await service.get(`/event/${id}`), 200);
    assert.deepEqual(stored.properties, HOSTILE_VALUE);
    assert.ok(hasOwn(stored.properties, '__proto__'));
  });

  test('event sources take no field from __proto__', async () => {
    const res = await send(
      '/event-source',
      '{"id":"proto-src","__proto__":{"enabled":false,"transitional":true,"consent":true},"constructor":{"prototype":{"enabled":false}}}',
      AUTH,
    );
    const source = expectStatus(res, 200);
    assert.equal(source.enabled, true);
    assert.equal(source.transitional, false);
    assert.equal(source.consent, false);
    const stored = expectStatus(await service.get('/event-source/proto-src'), 200);
    assert.equal(stored.enabled, true);
    const tracked = await send('/track', rawTrack({ source: '{"id":"proto-src"}' }));
    assert.equal(tracked.statusCode, 200);
    assert.equal((await storedEvents(tracked)).length, 1);
  });

  test('event types take no validation from __proto__; a __proto__ target is refused', async () => {
    const res = await send(
      '/event/management',
      '{"event_type":"proto-type","__proto__":{"validation":{"enabled":true,"json_schema":{"event@properties":{"required":["x"]}}}}}',
      AUTH,
    );
    expectStatus(res, 200);
    const tracked = await send('/track', rawTrack({ events: '[{"type":"proto-type","properties":{}}]' }));
    assert.equal(tracked.statusCode, 200);
    const refused = await send(
      '/event/management',
      '{"event_type":"proto-type-2","validation":{"json_schema":{"__proto__":{"type":"object"}}}}',
      AUTH,
    );
    assertError(answerOf(refused), 422, '__proto__ target');
  });

  test('a quarantined request with __proto__ keys replays them literally', async () => {
    expectStatus(
      await service.manage('POST', '/event/management', {
        event_type: 'priced',
        validation: { json_schema: { 'event@properties': { type: 'object', required: ['price'] } } },
      }),
      200,
    );
    const refused = await send(
      '/track',
      rawTrack({ context: HOSTILE, events: `[{"type":"priced","properties":${HOSTILE}}]` }),
    );
    assert.equal(refused.statusCode, 406);
    const list = expectStatus(await service.get('/event/rejected?event_type=priced'), 200);
    const rejected = list.result[0] as Json;
    assert.ok(hasOwn(rejected.request.body.events[0].properties, '__proto__'));
    expectStatus(await service.manage('DELETE', '/event/management/priced'), 200);
    const replayed = await send(`/event/rejected/${rejected.id}/replay`, '', AUTH);
    const answer = expectStatus(replayed, 200);
    assert.ok(answer.profile.id);
    const events = await allEvents(service, { type: 'priced' });
    assert.equal(events.length, 1);
    assert.deepEqual(events[0]!.properties, HOSTILE_VALUE);
    assert.deepEqual(events[0]!.context, HOSTILE_VALUE);
  });

  test('pollution keys in query strings are ignored or refused, never 5xx', async () => {
    for (const query of [
      '__proto__[polluted]=1',
      'constructor[prototype][polluted]=1',
      '__proto__.polluted=1',
      '__proto__=1&__proto__=2',
      'limit=1&__proto__[limit]=5000',
    ]) {
      const res = await service.get(`/events?${query}`);
      assert.ok(
        res.statusCode === 200 || (res.statusCode >= 400 && res.statusCode < 500),
        `${query}: ${res.statusCode}`,
      );
      assertNotPolluted(snapshot);
    }
    const res = await send('/track?__proto__[profile_less]=true&constructor[prototype][x]=1', rawTrack());
    assert.ok((res.json() as Json).profile.id);
  });
});

// ---------------------------------------------------------------------------------------------

const controls = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join('');

/** [name, value, well-formed UTF-16 (usable in a URL)]. */
const HOSTILE_STRINGS: [string, string, boolean][] = [
  ['SQL: drop table', "'; DROP TABLE events; --", true],
  ['SQL: or 1=1', '" OR 1=1 --', true],
  ['SQL: quote tautology', "1' OR '1'='1", true],
  ['SQL: LIKE wildcards', "%_%' ESCAPE '\\", true],
  ['SQL: union', "x' UNION SELECT doc FROM sessions --", true],
  ['SQL: comment and semicolon', '*/; DELETE FROM profiles; /*', true],
  ['JSON-looking text', '{"$gt":""}', true],
  ['control characters \\u0000-\\u001f', controls, true],
  ['NUL in the middle', 'a\u0000b', true],
  ['DEL and C1 controls', '\u007f\u0080\u009f', true],
  ['lone high surrogate', 'x\ud800', false],
  ['lone low surrogate', '\udfffy', false],
  ['reversed surrogates', '\udc00\ud800', false],
  ['RTL override and marks', '\u202eabc\u200f\u200e\u2066', true],
  ['zero-width and BOM', '\u200b\u200d\ufeff', true],
  ['emoji with joiners', '😀👨‍👩‍👧‍👦🏳️‍🌈', true],
  ['combining marks', 'e\u0301\u0308\u0327', true],
  ['U+FFFD and noncharacters', '\ufffd\uffff\ufffe', true],
  ['path and URL characters', '../../etc/passwd?x=1#frag%00&', true],
  ['HTML', '<script>alert(1)</script>', true],
  ['128 astral characters (256 UTF-16 units)', '𝔘'.repeat(128), true],
];

describe('hostile strings are stored and read back literally', () => {
  let service: Service;
  let sent = 0;
  before(async () => {
    service = await startService();
    await service.createSource();
  });
  after(() => service.close());

  for (const [name, value, wellFormed] of HOSTILE_STRINGS) {
    test(name, async () => {
      const body = {
        source: { id: 'src-1' },
        session: { id: value },
        context: { [value]: value },
        properties: { [value]: value },
        options: { debugger: true },
        events: [{ type: value, properties: { [value]: value, v: value }, context: { c: value } }],
      };
      const res = await service.post('/track', body);
      const answer = expectStatus(res, 200, name);
      sent++;
      assert.equal(answer.session.id, value);
      const [id] = answer.debugging.events.ids as string[];
      const event = expectStatus(await service.get(`/event/${id}`), 200);
      assert.equal(event.type, value);
      assert.equal(event.session.id, value);
      assert.deepEqual(event.properties, { [value]: value, v: value });
      assert.deepEqual(event.context, { [value]: value, c: value });
      if (!wellFormed) return;
      const session = expectStatus(await service.get(`/session/${encodeURIComponent(value)}`), 200);
      assert.equal(session.id, value);
      assert.deepEqual(session.properties, { [value]: value });
      assert.deepEqual(session.context, { [value]: value });
      const found = await allEvents(service, { session_id: value, type: value });
      assert.deepEqual(
        found.map((e) => e.id),
        [id],
      );
    });
  }

  test('hostile event types through /collect', async () => {
    for (const [name, value, wellFormed] of HOSTILE_STRINGS) {
      if (!wellFormed) continue;
      const res = await service.post(`/collect/${encodeURIComponent(value)}/src-1`, { [value]: value });
      const answer = expectStatus(res, 200, name);
      sent++;
      const event = expectStatus(await service.get(`/event/${answer.event.id}`), 200);
      assert.equal(event.type, value, name);
      assert.deepEqual(event.properties, { [value]: value }, name);
    }
  });

  test('very long unicode values and keys', async () => {
    const long = '日本語テキスト🙂'.repeat(10_000);
    const key = 'ключ'.repeat(2_500);
    const res = await service.post('/track', {
      source: { id: 'src-1' },
      session: { id: 'long-unicode' },
      options: { debugger: true },
      events: [{ type: 'タイプ'.repeat(85), properties: { [key]: long }, context: { long } }],
    });
    const answer = expectStatus(res, 200);
    sent++;
    const event = expectStatus(await service.get(`/event/${answer.debugging.events.ids[0]}`), 200);
    assert.equal(event.type, 'タイプ'.repeat(85));
    assert.equal(event.properties[key], long);
    assert.equal(event.context.long, long);
  });

  test('nothing was dropped or altered in the store: every event is there', async () => {
    assert.equal((await allEvents(service)).length, sent);
    expectStatus(await service.app.inject({ method: 'GET', url: '/health' }), 200);
  });
});
