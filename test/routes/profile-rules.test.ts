/**
 * Profile rule management (docs/api.md #profile-rules): the token, saving with defaults and
 * replacing, listing in first-saved order, reading and deleting, and every check made when a rule
 * is saved, each a 422 naming the operation and the field.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startService, type Service } from '../helpers.js';
import { expectError, expectFieldError, expectStatus, type Json } from './support.js';

describe('profile rule management', () => {
  let service: Service;
  before(async () => {
    service = await startService();
  });
  after(() => service.close());

  const save = (body: unknown) => service.manage('POST', '/profile-rule', body);

  test('every endpoint requires the token', async () => {
    for (const [method, url] of [
      ['POST', '/profile-rule'],
      ['GET', '/profile-rules'],
      ['GET', '/profile-rule/x'],
      ['DELETE', '/profile-rule/x'],
    ] as const) {
      const res = await service.app.inject({ method, url, payload: method === 'POST' ? {} : undefined });
      assert.equal(expectError(res, 401), 'Not authenticated', `${method} ${url}`);
    }
  });

  test('save with defaults, replace, read, list in first-saved order, delete', async () => {
    const created = expectStatus(
      await save({ event_type: 'purchase', operations: [{ op: 'increment', path: 'traits.public.orders' }] }),
      200,
    );
    assert.match(created.id, /^[0-9a-f-]{36}$/);
    assert.deepEqual(created, {
      id: created.id,
      name: '',
      enabled: true,
      event_type: 'purchase',
      source_id: null,
      operations: [{ op: 'increment', path: 'traits.public.orders' }],
    });
    const second = expectStatus(
      await save({
        id: 'second',
        name: 'Email',
        enabled: false,
        event_type: 'sign-up',
        source_id: 'web',
        operations: [{ op: 'identify', type: 'email', from: 'properties.email', unknown: 1 }],
        unknown: true,
      }),
      200,
    );
    assert.deepEqual(second.operations, [{ op: 'identify', type: 'email', from: 'properties.email' }]);
    assert.equal('unknown' in second, false);
    const replaced = expectStatus(
      await save({
        id: created.id,
        event_type: 'order',
        operations: [{ op: 'add_segment', value: 'buyers' }],
      }),
      200,
    );
    assert.deepEqual(expectStatus(await service.get(`/profile-rule/${created.id}`), 200), replaced);
    const listed = expectStatus(await service.get('/profile-rules'), 200);
    assert.equal(listed.total, 2);
    assert.deepEqual(
      listed.result.map((r: Json) => r.id),
      [created.id, 'second'],
    );
    assert.deepEqual(expectStatus(await service.get('/profile-rules?event_type=sign-up'), 200).result, [
      second,
    ]);
    assert.deepEqual(expectStatus(await service.manage('DELETE', '/profile-rule/second'), 200), {
      deleted: 1,
    });
    assert.equal(
      expectError(await service.get('/profile-rule/second'), 404),
      'Profile rule `second` not found',
    );
    assert.equal(
      expectError(await service.manage('DELETE', '/profile-rule/second'), 404),
      'Profile rule `second` not found',
    );
  });

  test('the shape: required fields, known ops, at most 100 operations', async () => {
    expectFieldError(await save({ operations: [{ op: 'set' }] }), ['event_type']);
    expectFieldError(await save({ event_type: 'x' }), ['operations']);
    expectFieldError(await save({ event_type: 'x', operations: [] }), ['operations']);
    expectFieldError(await save({ event_type: 'x', operations: [{ op: 'merge' }] }), ['operations', 0, 'op']);
    expectFieldError(await save({ event_type: 'x', operations: ['set'] }), ['operations', 0]);
    expectFieldError(await save({ event_type: 'x', operations: [{ op: 'set', path: 7 }] }), [
      'operations',
      0,
      'path',
    ]);
    expectFieldError(
      await save({ event_type: 'x', source_id: '', operations: [{ op: 'add_segment', value: 'a' }] }),
      ['source_id'],
    );
    const many = Array.from({ length: 101 }, () => ({ op: 'increment', path: 'traits.public.n' }));
    expectFieldError(await save({ event_type: 'x', operations: many }), ['operations']);
    const thousands = Array.from({ length: 5000 }, () => ({ op: 'increment', path: 'traits.public.n' }));
    expectFieldError(await save({ event_type: 'x', operations: thousands }), ['operations']);
  });

  /** Saving `op` alone must be a 422 at operations.0.<field> whose message names the operation. */
  async function refused(op: Json, field: string, message: RegExp) {
    const res = await save({ event_type: 'checked', operations: [{ op: 'add_segment', value: 'ok' }, op] });
    const detail = expectError(res, 422) as Json[];
    const item = detail.find(
      (d) => JSON.stringify(d.loc) === JSON.stringify(['body', 'operations', 1, field]),
    );
    assert.ok(item, `no error at operations.1.${field}: ${res.body}`);
    assert.match(item.msg, new RegExp(`^${op.op}: `));
    assert.match(item.msg, message);
    assert.equal(item.type, 'value_error.operation');
  }

  test('paths: only under traits.public, traits.private, consents and interests, without prototype keys', async () => {
    for (const path of [
      'stats.visits',
      'id',
      'traits',
      'traits.public',
      'traits.secret.x',
      'segments.0',
      'ids.email',
      'metadata.time.insert',
      'consents',
      'traitspublic.x',
    ]) {
      await refused({ op: 'set', path, value: 1 }, 'path', /must be a dotted path under traits.public/);
    }
    for (const path of ['traits.public.__proto__', 'consents.constructor.x', 'interests.a.prototype']) {
      await refused({ op: 'set', path, value: 1 }, 'path', /__proto__, constructor or prototype/);
    }
    for (const path of ['traits.public..x', 'traits.public.a b', 'traits.public.x.']) {
      await refused({ op: 'set', path, value: 1 }, 'path', /non-empty without spaces/);
    }
    await refused(
      { op: 'set', path: `traits.public.${'a.'.repeat(10)}z`, value: 1 },
      'path',
      /at most 10 segments/,
    );
    await refused({ op: 'set', value: 1 }, 'path', /`path` is required/);
    await refused({ op: 'add_segment', path: 'traits.public.x', value: 'a' }, 'path', /not taken/);
    await refused({ op: 'set', path: 'traits.public.x', from: 'properties.__proto__' }, 'from', /__proto__/);
    await refused({ op: 'set', path: 'traits.public.x', from: 'properties..x' }, 'from', /non-empty/);
  });

  test('values: present as each operation needs, of the right kind, at most 16 KiB', async () => {
    await refused({ op: 'set', path: 'traits.public.x' }, 'value', /`value` or `from` is required/);
    await refused({ op: 'append', path: 'traits.public.x' }, 'value', /`value` or `from` is required/);
    await refused({ op: 'set', path: 'traits.public.x', value: 1, from: 'properties.x' }, 'from', /not both/);
    await refused({ op: 'unset', path: 'traits.public.x', value: 1 }, 'value', /not taken/);
    await refused({ op: 'unset', path: 'traits.public.x', from: 'properties.x' }, 'from', /not taken/);
    await refused({ op: 'increment', path: 'traits.public.x', value: '1' }, 'value', /must be a number/);
    await refused({ op: 'add_segment', value: '' }, 'value', /segment name/);
    await refused({ op: 'remove_segment', value: 3 }, 'value', /segment name/);
    await refused({ op: 'add_segment', value: 'x'.repeat(129) }, 'value', /segment name/);
    await refused({ op: 'add_segment' }, 'value', /required/);
    await refused({ op: 'identify', value: 'a@b' }, 'type', /`type` is required/);
    await refused({ op: 'identify', type: 'E-mail', value: 'a@b' }, 'type', /\[a-z_\]\{1,32\}/);
    await refused({ op: 'identify', type: 'email', value: 'anonymous' }, 'value', /names someone/);
    await refused({ op: 'set', type: 'email', path: 'traits.public.x', value: 1 }, 'type', /identify only/);
    // Values of 1 MB, and the value of 16 KiB just over the bound.
    await refused(
      { op: 'set', path: 'traits.public.x', value: 'x'.repeat(1_000_000) },
      'value',
      /larger than 16384 bytes/,
    );
    await refused(
      { op: 'append', path: 'traits.public.x', value: { a: 'x'.repeat(16_400) } },
      'value',
      /16384/,
    );
    const fits = { op: 'set', path: 'traits.public.x', value: 'x'.repeat(16_000) };
    expectStatus(await save({ event_type: 'fits', operations: [fits] }), 200);
    // increment and unset take no value; null is a value for set.
    expectStatus(
      await save({
        event_type: 'fine',
        operations: [
          { op: 'increment', path: 'traits.public.n' },
          { op: 'unset', path: 'consents.newsletter' },
          { op: 'set', path: 'traits.private.x', value: null },
          { op: 'identify', type: 'loyalty_card', from: 'properties.card' },
        ],
      }),
      200,
    );
  });

  test('every problem is reported, none saved', async () => {
    const res = await save({
      id: 'broken',
      event_type: 'broken',
      operations: [
        { op: 'set', path: 'stats.visits', value: 1 },
        { op: 'add_segment', value: 'ok' },
        { op: 'increment', path: 'traits.public.__proto__' },
      ],
    });
    const detail = expectError(res, 422) as Json[];
    assert.deepEqual(
      detail.map((d) => d.loc),
      [
        ['body', 'operations', 0, 'path'],
        ['body', 'operations', 2, 'path'],
      ],
    );
    assert.equal((await service.get('/profile-rule/broken')).statusCode, 404);
  });

  test('the enabled rules of one event type hold at most 1000 operations', async () => {
    const ops = Array.from({ length: 100 }, () => ({ op: 'increment', path: 'traits.public.n' }));
    for (let i = 0; i < 10; i++)
      expectStatus(await save({ id: `budget-${i}`, event_type: 'budget', operations: ops }), 200);
    const over = await save({ id: 'budget-10', event_type: 'budget', operations: [ops[0]] });
    const [item] = expectError(over, 422) as Json[];
    assert.deepEqual(item!.loc, ['body', 'operations']);
    assert.match(item!.msg, /would hold 1001 operations, at most 1000/);
    // Disabled rules do not count, and replacing a rule counts it once.
    expectStatus(await save({ id: 'budget-10', event_type: 'budget', enabled: false, operations: ops }), 200);
    expectStatus(await save({ id: 'budget-0', event_type: 'budget', operations: ops }), 200);
  });
});
