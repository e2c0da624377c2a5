import assert from 'node:assert/strict';
import { describe, test, beforeEach, afterEach } from 'node:test';
import { payload, startService, type Service } from '../helpers.js';

async function schema(
  service: Service,
  event_type: string,
  json_schema: Record<string, unknown>,
  enabled = true,
) {
  const res = await service.manage('POST', '/event/management', {
    event_type,
    validation: { enabled, json_schema },
  });
  assert.equal(res.statusCode, 200, res.body);
}

const priceRequired = {
  'event@properties': { type: 'object', properties: { price: { type: 'number' } }, required: ['price'] },
};

async function storedEvents(service: Service): Promise<Record<string, unknown>[]> {
  return (await service.get('/events?limit=1000')).json().result;
}

describe('validation applied to /track and /collect (docs/api.md #applying-schemas)', () => {
  let service: Service;
  beforeEach(async () => {
    service = await startService({ validatorTtlSec: 180 });
    await service.createSource();
  });
  afterEach(() => service.close());

  test('a missing required property gives the exact 406 of the contract', async () => {
    await schema(service, 'purchase', priceRequired);
    const res = await service.post('/track', payload({ events: [{ type: 'purchase', properties: {} }] }));
    assert.equal(res.statusCode, 406);
    assert.deepEqual(res.json(), {
      detail: "validation failed with error: event@properties: 'price' is a required property",
      errors: [
        { event: 0, type: 'purchase', target: 'event@properties', reason: "'price' is a required property" },
      ],
    });
  });

  test('a wrong type names the JSON pointer and the rule; the target itself has no pointer', async () => {
    await schema(service, 'purchase', priceRequired);
    const wrong = await service.post(
      '/track',
      payload({ events: [{ type: 'purchase', properties: { price: 'x' } }] }),
    );
    assert.equal(
      wrong.json().detail,
      'validation failed with error: event@properties: /price must be number',
    );
    await schema(service, 'tagged', { 'event@properties.tags': { type: 'object' } });
    const root = await service.post(
      '/track',
      payload({ events: [{ type: 'tagged', properties: { tags: [1] } }] }),
    );
    assert.equal(root.json().detail, 'validation failed with error: event@properties.tags: must be object');
  });

  test('a mixed batch stores nothing: not the session, the profile or the valid events', async () => {
    await schema(service, 'purchase', priceRequired);
    const body = payload({
      events: [
        { type: 'page-view', properties: {} },
        { type: 'purchase', properties: { price: 1 } },
        { type: 'purchase', properties: { price: '1' } },
        { type: 'purchase', properties: {} },
      ],
    });
    const res = await service.post('/track', body);
    assert.equal(res.statusCode, 406);
    assert.deepEqual(
      res.json().errors.map((e: { event: number }) => e.event),
      [2, 3],
      'errors list every failing event',
    );
    assert.equal((await storedEvents(service)).length, 0);
    const sessionId = (body.session as { id: string }).id;
    assert.equal((await service.get(`/session/${sessionId}`)).statusCode, 404);
  });

  test('a disabled schema is not applied', async () => {
    await schema(service, 'purchase', priceRequired, false);
    const res = await service.post('/track', payload({ events: [{ type: 'purchase', properties: {} }] }));
    assert.equal(res.statusCode, 200);
  });

  test('types are matched exactly: a schema for `purchase` does not apply to `Purchase`', async () => {
    await schema(service, 'purchase', priceRequired);
    const res = await service.post('/track', payload({ events: [{ type: 'Purchase', properties: {} }] }));
    assert.equal(res.statusCode, 200);
  });

  test('a nested path target, and a path with no value', async () => {
    await schema(service, 'view', { 'event@context.page.url': { type: 'string', pattern: '^https://' } });
    const ok = await service.post(
      '/track',
      payload({ context: { page: { url: 'https://a.example/' } }, events: [{ type: 'view' }] }),
    );
    assert.equal(ok.statusCode, 200, ok.body);
    const bad = await service.post(
      '/track',
      payload({ events: [{ type: 'view', context: { page: { url: 'http://a.example/' } } }] }),
    );
    assert.equal(bad.statusCode, 406);
    assert.match(
      bad.json().detail,
      /^validation failed with error: event@context\.page\.url: must match pattern/,
    );
    const missing = await service.post('/track', payload({ events: [{ type: 'view' }] }));
    assert.equal(
      missing.json().detail,
      'validation failed with error: event@context.page.url: no value at `context.page.url`',
    );
  });

  test('a numeric path segment indexes an array', async () => {
    await schema(service, 'basket', { 'event@properties.items.0': { type: 'object', required: ['sku'] } });
    const ok = await service.post(
      '/track',
      payload({ events: [{ type: 'basket', properties: { items: [{ sku: 'a' }] } }] }),
    );
    assert.equal(ok.statusCode, 200);
    const bad = await service.post(
      '/track',
      payload({ events: [{ type: 'basket', properties: { items: [{}] } }] }),
    );
    assert.equal(
      bad.json().detail,
      "validation failed with error: event@properties.items.0: 'sku' is a required property",
    );
  });

  test('the whole-object target sees the event as it would be stored', async () => {
    await schema(service, 'whole', {
      'event@...': {
        type: 'object',
        required: ['id', 'source', 'session', 'profile', 'metadata'],
        properties: { source: { const: { id: 'src-1' } }, metadata: { required: ['time'] } },
      },
    });
    const res = await service.post('/track', payload({ events: [{ type: 'whole' }] }));
    assert.equal(res.statusCode, 200, res.body);
  });

  test('session targets see the session with the merged context', async () => {
    await schema(service, 'view', { 'session@context.browser': { type: 'object', required: ['language'] } });
    const sessionId = 'session-with-context';
    const first = await service.post(
      '/track',
      payload({
        session: { id: sessionId },
        context: { browser: { language: 'en' } },
        events: [{ type: 'other' }],
      }),
    );
    assert.equal(first.statusCode, 200);
    // The context is on the stored session now, so a later request without it passes.
    const later = await service.post(
      '/track',
      payload({ session: { id: sessionId }, events: [{ type: 'view' }] }),
    );
    assert.equal(later.statusCode, 200, later.body);
    const fresh = await service.post('/track', payload({ events: [{ type: 'view' }] }));
    assert.equal(
      fresh.json().detail,
      'validation failed with error: session@context.browser: no value at `context.browser`',
    );
  });

  test('profile targets see the profile; profile-less requests skip them', async () => {
    await schema(service, 'signup', { 'profile@stats.visits': { type: 'integer', maximum: 0 } });
    const withProfile = await service.post('/track', payload({ events: [{ type: 'signup' }] }));
    assert.equal(withProfile.statusCode, 406);
    assert.equal(
      withProfile.json().detail,
      'validation failed with error: profile@stats.visits: must be <= 0',
    );
    const profileLess = await service.post(
      '/track?profile_less=true',
      payload({ events: [{ type: 'signup' }] }),
    );
    assert.equal(profileLess.statusCode, 200, profileLess.body);
  });

  test('targets are checked in the order of the keys as saved', async () => {
    await schema(service, 'ordered', {
      'event@properties.b': { type: 'string' },
      'event@properties.a': { type: 'string' },
    });
    const res = await service.post('/track', payload({ events: [{ type: 'ordered', properties: {} }] }));
    assert.deepEqual(
      res.json().errors.map((e: { target: string }) => e.target),
      ['event@properties.b', 'event@properties.a'],
    );
    assert.match(res.json().detail, /event@properties\.b/);
  });

  test('/collect is validated: 406 and nothing stored; session targets are skipped', async () => {
    await schema(service, 'coupon', {
      'session@id': { type: 'string' },
      'event@properties': { type: 'object', required: ['code'] },
    });
    const bad = await service.post('/collect/coupon/src-1', { value: 1 });
    assert.equal(bad.statusCode, 406);
    assert.equal(
      bad.json().detail,
      "validation failed with error: event@properties: 'code' is a required property",
    );
    assert.equal((await storedEvents(service)).length, 0);
    const good = await service.post('/collect/coupon/src-1', { code: 'X' });
    assert.equal(good.statusCode, 200, good.body);
    assert.equal((await storedEvents(service)).length, 1);
  });

  test('events with options.save false are validated too', async () => {
    await schema(service, 'purchase', priceRequired);
    const res = await service.post(
      '/track',
      payload({ events: [{ type: 'purchase', properties: {}, options: { save: false } }] }),
    );
    assert.equal(res.statusCode, 406);
  });

  test('the debugger shows which events were validated', async () => {
    await schema(service, 'purchase', priceRequired);
    const res = await service.post(
      '/track',
      payload({
        options: { debugger: true },
        events: [{ type: 'purchase', properties: { price: 2 } }, { type: 'view' }],
      }),
    );
    const events = res.json().debugging.execution.events as { type: string; validation: string }[];
    assert.deepEqual(
      events.map((e) => [e.type, e.validation]),
      [
        ['purchase', 'passed'],
        ['view', 'no schema'],
      ],
    );
  });

  test('formats are checked', async () => {
    await schema(service, 'signup', { 'event@properties.email': { type: 'string', format: 'email' } });
    const bad = await service.post(
      '/track',
      payload({ events: [{ type: 'signup', properties: { email: 'nope' } }] }),
    );
    assert.equal(
      bad.json().detail,
      'validation failed with error: event@properties.email: must match format "email"',
    );
  });
});

describe('regular expressions in schemas run in linear time', () => {
  test('a catastrophic pattern on a long input answers at once instead of stalling', async (t) => {
    const service = await startService();
    t.after(() => service.close());
    await service.createSource();
    await schema(service, 'search', {
      'event@properties': {
        type: 'object',
        properties: { q: { type: 'string', pattern: '^(a+)+$' } },
        patternProperties: { '^(x|x)+$': { type: 'number' } },
      },
    });
    // With a backtracking engine each of these would take longer than the test timeout.
    const hostile = 'a'.repeat(50_000) + '!';
    const res = await service.post(
      '/track',
      payload({ events: [{ type: 'search', properties: { q: hostile } }] }),
    );
    assert.equal(res.statusCode, 406);
    assert.match(res.json().detail, /\/q must match pattern/);
    const key = 'x'.repeat(5_000) + 'y';
    const ok = await service.post(
      '/track',
      payload({ events: [{ type: 'search', properties: { [key]: 'text' } }] }),
    );
    assert.equal(ok.statusCode, 200, 'a key the pattern does not match is not constrained');
    const matched = await service.post(
      '/track',
      payload({ events: [{ type: 'search', properties: { xxx: 'text' } }] }),
    );
    assert.equal(matched.statusCode, 406);
  });

  test('patterns the linear engine cannot run (lookaround, backreferences) are refused on save', async (t) => {
    const service = await startService();
    t.after(() => service.close());
    for (const pattern of ['(?=a)b', '(a)\\1']) {
      const res = await service.manage('POST', '/event/management', {
        event_type: 'x',
        validation: {
          json_schema: { 'event@properties': { type: 'object', properties: { a: { pattern } } } },
        },
      });
      assert.equal(res.statusCode, 422, pattern);
      assert.deepEqual(res.json().detail[0].loc, ['body', 'validation', 'json_schema', 'event@properties']);
    }
  });
});
