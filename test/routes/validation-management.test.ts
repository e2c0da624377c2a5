import assert from 'node:assert/strict';
import { describe, test, before, after } from 'node:test';
import { startService, type Service } from '../helpers.js';

const purchase = {
  event_type: 'purchase',
  name: 'Purchase',
  description: 'a bought basket',
  tags: ['shop'],
  validation: {
    enabled: true,
    json_schema: {
      'event@properties': {
        type: 'object',
        properties: { price: { type: 'number' } },
        required: ['price'],
      },
    },
  },
};

describe('validation schema management (docs/api.md #conventions, #event-type, #targets)', () => {
  let service: Service;
  before(async () => {
    service = await startService();
  });
  after(() => service.close());

  test('every endpoint requires the token', async () => {
    for (const [method, url] of [
      ['POST', '/event/management'],
      ['GET', '/event/management'],
      ['GET', '/event/management/purchase'],
      ['DELETE', '/event/management/purchase'],
    ] as const) {
      const res = await service.app.inject({
        method,
        url,
        payload: method === 'POST' ? purchase : undefined,
      });
      assert.equal(res.statusCode, 401, `${method} ${url}`);
      assert.deepEqual(res.json(), { detail: 'Not authenticated' });
    }
  });

  test('add, read, list, replace and delete a record', async () => {
    const saved = await service.manage('POST', '/event/management', purchase);
    assert.equal(saved.statusCode, 200);
    assert.deepEqual(saved.json(), purchase);

    assert.deepEqual((await service.get('/event/management/purchase')).json(), purchase);
    assert.deepEqual((await service.get('/event/management')).json(), { total: 1, result: [purchase] });

    // Saving replaces the whole record: absent fields take their defaults again.
    const replaced = await service.manage('POST', '/event/management', {
      event_type: 'purchase',
      validation: { json_schema: {} },
    });
    assert.deepEqual(replaced.json(), {
      event_type: 'purchase',
      name: 'purchase',
      description: '',
      tags: [],
      validation: { enabled: true, json_schema: {} },
    });

    const deleted = await service.manage('DELETE', '/event/management/purchase');
    assert.deepEqual(deleted.json(), { deleted: 1 });
    assert.equal((await service.get('/event/management/purchase')).statusCode, 404);
    assert.equal((await service.manage('DELETE', '/event/management/purchase')).statusCode, 404);
    assert.deepEqual((await service.get('/event/management')).json(), { total: 0, result: [] });
  });

  test('event types are matched exactly: case matters', async () => {
    await service.manage('POST', '/event/management', purchase);
    assert.equal((await service.get('/event/management/Purchase')).statusCode, 404);
    await service.manage('DELETE', '/event/management/purchase');
  });

  test('key order of json_schema is kept as saved', async () => {
    const keys = ['profile@traits', 'event@properties', 'session@context', 'event@...'];
    const json_schema = Object.fromEntries(keys.map((k) => [k, { type: 'object' }]));
    await service.manage('POST', '/event/management', { event_type: 'ordered', validation: { json_schema } });
    const back = (await service.get('/event/management/ordered')).json();
    assert.deepEqual(Object.keys(back.validation.json_schema), keys);
  });

  const refused: [string, string, unknown, RegExp][] = [
    ['a key without @', 'properties', { type: 'object' }, /invalid target/],
    ['an unknown object', 'visitor@properties', { type: 'object' }, /invalid target/],
    ['an empty path', 'event@', { type: 'object' }, /invalid target/],
    ['an empty path segment', 'event@context..page', { type: 'object' }, /invalid target/],
    ['an invalid schema', 'event@properties', { type: 'objectt' }, /is invalid/],
    ['a schema that is not an object', 'event@properties', 'string', /must be a JSON Schema object/],
    ['a remote $ref', 'event@properties', { $ref: 'https://example.com/schema.json' }, /remote references/],
    [
      'a nested relative $ref to another file',
      'event@properties',
      { type: 'object', properties: { a: { $ref: 'other.json#/a' } } },
      /remote references/,
    ],
    [
      'an unsupported $schema',
      'event@properties',
      { $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' },
      /unsupported \$schema/,
    ],
  ];
  for (const [what, key, schema, msg] of refused) {
    test(`saving ${what} is a 422 naming the key`, async () => {
      const res = await service.manage('POST', '/event/management', {
        event_type: 'bad',
        validation: { json_schema: { 'event@context': { type: 'object' }, [key]: schema } },
      });
      assert.equal(res.statusCode, 422, res.body);
      const detail = res.json().detail as { loc: string[]; msg: string }[];
      assert.equal(detail.length, 1);
      assert.deepEqual(detail[0]!.loc, ['body', 'validation', 'json_schema', key]);
      assert.match(detail[0]!.msg, msg);
      assert.equal((await service.get('/event/management/bad')).statusCode, 404, 'nothing saved');
    });
  }

  test('draft-07 and draft 2020-12 schemas are both accepted', async () => {
    for (const $schema of [
      'http://json-schema.org/draft-07/schema#',
      'https://json-schema.org/draft/2020-12/schema',
    ]) {
      const res = await service.manage('POST', '/event/management', {
        event_type: 'drafts',
        validation: { json_schema: { 'event@properties': { $schema, type: 'object' } } },
      });
      assert.equal(res.statusCode, 200, `${$schema}: ${res.body}`);
    }
  });

  test('local $ref inside the schema is allowed', async () => {
    const res = await service.manage('POST', '/event/management', {
      event_type: 'local-ref',
      validation: {
        json_schema: {
          'event@properties': {
            $defs: { price: { type: 'number' } },
            type: 'object',
            properties: { price: { $ref: '#/$defs/price' } },
          },
        },
      },
    });
    assert.equal(res.statusCode, 200, res.body);
  });

  test('a missing event_type or wrong field types are 422 with the field path', async () => {
    const missing = await service.manage('POST', '/event/management', { validation: {} });
    assert.equal(missing.statusCode, 422);
    assert.deepEqual(missing.json().detail[0].loc, ['body', 'event_type']);
    const wrong = await service.manage('POST', '/event/management', {
      event_type: 'x',
      validation: { enabled: 'yes' },
    });
    assert.equal(wrong.statusCode, 422);
    assert.deepEqual(wrong.json().detail[0].loc, ['body', 'validation', 'enabled']);
  });
});
