/** JSON body rules of docs/api.md #conventions and the error table of §8. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AUTH, payload, startService, type Service } from '../helpers.js';
import { allEvents, expectError, expectStatus, read, type Json } from './support.js';

type Method = 'GET' | 'POST' | 'DELETE';

function raw(service: Service, url: string, body: string | Buffer, headers: Record<string, string> = {}) {
  return service.app.inject({ method: 'POST', url, payload: body, headers });
}

/** `levels` nested objects: nest(1) = {}, nest(2) = {"a":{}}. */
function nest(levels: number): Json {
  let value: Json = {};
  for (let i = 1; i < levels; i++) value = { a: value };
  return value;
}

/** A /track body whose deepest nesting is exactly `depth` levels (the body itself is level 1). */
function trackBodyOfDepth(depth: number): Json {
  // body (1) > events (2) > event (3) > properties (4...)
  return payload({ events: [{ type: 'deep', properties: nest(depth - 3) }] });
}

function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + Math.max(0, ...children.map(depthOf));
}

describe('JSON bodies whatever their Content-Type', () => {
  let service: Service;
  before(async () => {
    service = await startService();
    await service.createSource();
  });
  after(() => service.close());

  const CONTENT_TYPES: (string | undefined)[] = [
    'application/json',
    'application/json; charset=utf-8',
    'text/plain',
    'text/plain;charset=UTF-8',
    undefined,
    'application/x-www-form-urlencoded',
  ];

  for (const type of CONTENT_TYPES) {
    test(`/track, /collect and management bodies are parsed with Content-Type ${type ?? '(none)'}`, async () => {
      const headers: Record<string, string> = type ? { 'content-type': type } : {};
      const sid = `ct-${Math.random().toString(36).slice(2)}`;
      const body = payload({
        session: { id: sid },
        events: [{ type: 'ct', properties: { type: type ?? null } }],
      });
      const tracked = expectStatus(await raw(service, '/track', JSON.stringify(body), headers), 200);
      assert.equal(tracked.session.id, sid);
      const [event] = await allEvents(service, { session_id: sid });
      assert.deepEqual(event!.properties, { type: type ?? null });

      const collected = expectStatus(await raw(service, '/collect/ct/src-1', '{"k": "v"}', headers), 200);
      assert.deepEqual((await read(service, `/event/${collected.event.id}`)).properties, { k: 'v' });

      const source = await raw(service, '/event-source', JSON.stringify({ id: `ct-${sid}` }), {
        ...headers,
        ...AUTH,
      });
      expectStatus(source, 200);
    });
  }

  test('unknown fields anywhere in the tracker payload are accepted and ignored', async () => {
    const sid = `unknown-${Math.random().toString(36).slice(2)}`;
    const res = await service.post('/track', {
      source: { id: 'src-1', name: 'extra' },
      session: { id: sid, started: 'now' },
      profile: { id: null, traits: { a: 1 } },
      metadata: { time: { insert: '2020-01-01' } },
      something: [1, 2, 3],
      options: { debugger: false, futureOption: 'x' },
      events: [{ type: 'e', extra: true, options: { save: true, other: 1 } }],
    });
    const body = expectStatus(res, 200);
    assert.ok(!('something' in body));
    const [event] = await allEvents(service, { session_id: sid });
    assert.ok(!('extra' in event!));
  });

  test('unknown fields in management bodies are accepted', async () => {
    expectStatus(await service.manage('POST', '/event-source', { id: 'u', whatever: [1] }), 200);
    expectStatus(
      await service.manage('POST', '/event/management', { event_type: 'unknown-fields', colour: 'blue' }),
      200,
    );
  });

  test('optional objects sent as null count as absent', async () => {
    const sid = `null-${Math.random().toString(36).slice(2)}`;
    const res = await service.post('/track', {
      source: { id: 'src-1' },
      session: { id: sid },
      profile: null,
      context: null,
      properties: null,
      options: null,
      events: [{ type: 'n', properties: null, context: null, options: null }],
    });
    const body = expectStatus(res, 200);
    assert.deepEqual(Object.keys(body.profile), ['id']);
    const [event] = await allEvents(service, { session_id: sid });
    assert.deepEqual(event!.properties, {});
    assert.deepEqual(event!.context, {});
    const session = await read(service, `/session/${sid}`);
    assert.deepEqual(session.context, {});
    assert.deepEqual(session.properties, {});
  });

  test('required fields sent as null are a 422', async () => {
    for (const field of ['source', 'session', 'events']) {
      const res = await service.post('/track', payload({ [field]: null }));
      expectError(res, 422);
    }
    expectError(await service.post('/track', payload({ events: [{ type: null }] })), 422);
  });
});

describe('bodies that do not parse, nest too deep or hold non-finite numbers', () => {
  let service: Service;
  before(async () => {
    service = await startService();
    await service.createSource();
  });
  after(async () => {
    // Nothing of the refused requests may have been stored.
    assert.deepEqual(await allEvents(service, { type: 'deep' }), []);
    await service.close();
  });

  const UNPARSABLE = ['{', 'not json', '{"a": 1}x', '{"a": 1,}', "{'a': 1}", '{"a": NaN}', '[1, 2', '\u0000'];

  for (const url of ['/track', '/collect/a/src-1']) {
    test(`${url}: a body that does not parse is a 400 with a detail`, async () => {
      for (const body of UNPARSABLE) {
        expectError(await raw(service, url, body, { 'content-type': 'application/json' }), 400);
        expectError(await raw(service, url, body), 400);
      }
    });
  }

  test('a management body that does not parse is a 400', async () => {
    for (const url of ['/event-source', '/event/management']) {
      expectError(await raw(service, url, '{"id":', { ...AUTH, 'content-type': 'application/json' }), 400);
    }
  });

  test(`nesting of exactly 32 levels is accepted, 33 is a 422 (the default TRACK_MAX_DEPTH)`, async () => {
    const ok = trackBodyOfDepth(32);
    assert.equal(depthOf(ok), 32);
    expectStatus(
      await service.post('/track', { ...ok, events: [{ ...ok.events[0], type: 'deep-ok' }] }),
      200,
    );
    const tooDeep = trackBodyOfDepth(33);
    assert.equal(depthOf(tooDeep), 33);
    expectError(await service.post('/track', tooDeep), 422);
  });

  test('arrays count as levels too', async () => {
    let value: unknown = [];
    for (let i = 1; i < 29; i++) value = [value];
    // body (1) > events (2) > event (3) > properties (4) > 29 arrays (5..33)
    const body = payload({ events: [{ type: 'deep', properties: { list: value } }] });
    assert.equal(depthOf(body), 33);
    expectError(await service.post('/track', body), 422);
  });

  test('brackets inside strings do not count as nesting', async () => {
    const body = payload({
      events: [{ type: 'brackets', properties: { text: '{[{[{['.repeat(50) + '"\\' } }],
    });
    expectStatus(await service.post('/track', body), 200);
  });

  test('hostile nesting is a 422 (valid JSON) or 400 (unclosed), never a crash', async () => {
    const depth = 100_000;
    expectError(await raw(service, '/track', '['.repeat(depth) + ']'.repeat(depth)), 422);
    expectError(await raw(service, '/track', '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)), 422);
    expectError(
      await raw(service, '/collect/deep/src-1', '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)),
      422,
    );
    expectError(await raw(service, '/track', '['.repeat(depth)), 400);
    expectStatus(await service.app.inject({ method: 'GET', url: '/health' }), 200);
  });

  test('/collect and management bodies obey the same depth rule', async () => {
    expectError(await service.post('/collect/deep/src-1', nest(33)), 422);
    expectStatus(await service.post('/collect/deep-ok/src-1', nest(32)), 200);
    expectError(await service.manage('POST', '/event-source', { id: 'deep', extra: nest(40) }), 422);
    assert.equal((await service.get('/event-source/deep')).statusCode, 404);
  });

  test('a number that is not finite once parsed is a 422', async () => {
    const bodies = ['1e400', '-1e400', '1E+999', '1' + '0'.repeat(400), '-' + '9'.repeat(400) + '.5'];
    for (const number of bodies) {
      const track = `{"source":{"id":"src-1"},"session":{"id":"nf"},"events":[{"type":"deep","properties":{"n":${number}}}]}`;
      expectError(await raw(service, '/track', track), 422);
      expectError(await raw(service, '/collect/deep/src-1', `{"x":[1,{"n":${number}}]}`), 422);
    }
    expectError(await raw(service, '/event-source', '{"id":"nf","n":1e400}', AUTH), 422);
    assert.equal((await service.get('/session/nf')).statusCode, 404);
  });

  test('large but finite numbers and number-like strings are accepted', async () => {
    const track = `{"source":{"id":"src-1"},"session":{"id":"finite"},"events":[{"type":"finite","properties":{"a":1e300,"b":-1.5E-300,"c":"1e400","d":${'9'.repeat(200)}}}]}`;
    expectStatus(await raw(service, '/track', track), 200);
    const [event] = await allEvents(service, { type: 'finite' });
    assert.equal(event!.properties.a, 1e300);
    assert.equal(event!.properties.c, '1e400');
  });
});

describe('configured limits', () => {
  test('TRACK_MAX_DEPTH: the configured depth is the limit', async () => {
    const service = await startService({ maxDepth: 5 });
    try {
      await service.createSource();
      expectStatus(await service.post('/track', trackBodyOfDepth(5)), 200);
      expectError(await service.post('/track', trackBodyOfDepth(6)), 422);
      expectStatus(await service.post('/collect/a/src-1', nest(5)), 200);
      expectError(await service.post('/collect/a/src-1', nest(6)), 422);
    } finally {
      await service.close();
    }
  });

  test('TRACK_BODY_LIMIT: a body over the limit (in bytes) is a 413 with a detail', async () => {
    const limit = 2000;
    const service = await startService({ bodyLimit: limit });
    try {
      await service.createSource();
      const base = JSON.stringify(
        payload({ session: { id: 'limit' }, events: [{ type: 'big', properties: { pad: '' } }] }),
      );
      const exact = base.replace('"pad":""', `"pad":"${'x'.repeat(limit - base.length)}"`);
      assert.equal(Buffer.byteLength(exact), limit);
      expectStatus(await raw(service, '/track', exact), 200);
      const over = base.replace('"pad":""', `"pad":"${'x'.repeat(limit - base.length + 1)}"`);
      expectError(await raw(service, '/track', over), 413);
      // Bytes, not characters: 'é' is two bytes.
      const wide = base.replace(
        '"pad":""',
        `"pad":"${'é'.repeat(Math.ceil((limit - base.length) / 2) + 1)}"`,
      );
      assert.ok(wide.length <= limit && Buffer.byteLength(wide) > limit);
      expectError(await raw(service, '/track', wide), 413);
      expectError(await raw(service, '/collect/big/src-1', JSON.stringify({ pad: 'x'.repeat(limit) })), 413);
      expectError(await raw(service, '/event-source', JSON.stringify({ id: 'x'.repeat(limit) }), AUTH), 413);
      assert.equal((await allEvents(service)).length, 1);
    } finally {
      await service.close();
    }
  });

  test('the default body limit is 1 MiB', async () => {
    const service = await startService();
    try {
      await service.createSource();
      const base = JSON.stringify(payload({ events: [{ type: 'big', properties: { pad: '' } }] }));
      const over = base.replace('"pad":""', `"pad":"${'x'.repeat(1_048_576 - base.length + 1)}"`);
      expectError(await raw(service, '/track', over), 413);
      const under = base.replace('"pad":""', `"pad":"${'x'.repeat(1_048_576 - base.length - 10)}"`);
      expectStatus(await raw(service, '/track', under), 200);
    } finally {
      await service.close();
    }
  });

  test('TRACK_MAX_EVENTS: more events than the limit is a 413, as many is accepted', async () => {
    const service = await startService({ maxEvents: 3 });
    try {
      await service.createSource();
      const many = (n: number) =>
        payload({ events: Array.from({ length: n }, (_, i) => ({ type: `e${i}` })) });
      expectError(await service.post('/track', many(4)), 413);
      assert.equal((await allEvents(service)).length, 0);
      expectStatus(await service.post('/track', many(3)), 200);
      assert.equal((await allEvents(service)).length, 3);
    } finally {
      await service.close();
    }
  });

  test('the default TRACK_MAX_EVENTS is 1000', async () => {
    const service = await startService();
    try {
      await service.createSource();
      const many = (n: number) => payload({ events: Array.from({ length: n }, () => ({ type: 'e' })) });
      expectError(await service.post('/track', many(1001)), 413);
      expectStatus(await service.post('/track', many(1000)), 200);
      assert.equal((await allEvents(service)).length, 1000);
    } finally {
      await service.close();
    }
  });
});

describe('no input yields a 500', () => {
  let service: Service;
  before(async () => {
    service = await startService();
    await service.createSource();
  });
  after(() => service.close());

  const BODIES: string[] = [
    '',
    ' ',
    'null',
    'true',
    '0',
    '"text"',
    '[]',
    '[{}]',
    '{}',
    '{"source": "src-1"}',
    '{"source": {"id": "src-1"}, "session": {"id": "s"}, "events": [null]}',
    '{"source": {"id": "src-1"}, "session": {"id": "s"}, "events": [[]]}',
    '{"source": {"id": "src-1"}, "session": {"id": "s"}, "events": {"type": "a"}}',
    '{"source": {"id": "src-1"}, "session": {"id": "s"}, "events": [{"type": "a"}], "profile": []}',
    '{"source": {"id": "src-1"}, "session": {"id": "s"}, "events": [{"type": "a"}], "options": []}',
    '{"source": {"id": ["src-1"]}, "session": {"id": "s"}, "events": [{"type": "a"}]}',
    '{"__proto__": {"polluted": 1}, "source": {"id": "src-1"}, "session": {"id": "s"}, "events": [{"type": "a"}]}',
    '{"constructor": {"prototype": {"x": 1}}, "source": {"id": "src-1"}, "session": {"id": "s"}, "events": [{"type": "a"}]}',
    '\uFEFF{}',
    '\u00ff\u00fe',
  ];
  const TARGETS: [Method, string, Record<string, string>][] = [
    ['POST', '/track', {}],
    ['POST', '/track?profile_less=true', {}],
    ['POST', '/collect/a/src-1', {}],
    ['POST', '/event-source', AUTH],
    ['POST', '/event/management', AUTH],
  ];

  for (const [method, url, headers] of TARGETS) {
    test(`${method} ${url}: malformed bodies are answered with a 4xx or 200, never a 5xx`, async () => {
      for (const body of BODIES) {
        const res = await service.app.inject({ method, url, payload: body, headers });
        assert.ok(res.statusCode < 500, `${JSON.stringify(body)}: ${res.statusCode} ${res.body}`);
        if (res.statusCode >= 400) expectError(res, res.statusCode);
        assert.ok(!/\bat .+:\d+:\d+/.test(res.body), `stack trace in ${res.body}`);
      }
      assert.equal(({} as Json).polluted, undefined);
      assert.equal(({} as Json).x, undefined);
    });
  }

  test('unknown routes and methods answer JSON with a detail', async () => {
    const cases: [Method | 'PUT' | 'PATCH', string][] = [
      ['GET', '/nowhere'],
      ['GET', '/track'],
      ['PUT', '/track'],
      ['DELETE', '/collect/a/src-1'],
      ['PATCH', '/event-source'],
    ];
    for (const [method, url] of cases) {
      const res = await service.app.inject({ method, url, headers: AUTH });
      assert.ok(res.statusCode === 404 || res.statusCode === 405, `${method} ${url}: ${res.statusCode}`);
      expectError(res, res.statusCode);
    }
  });

  test('binary garbage is a 400', async () => {
    const res = await raw(service, '/track', Buffer.from([0xff, 0xfe, 0x00, 0x7b, 0x80]));
    expectError(res, 400);
  });
});
