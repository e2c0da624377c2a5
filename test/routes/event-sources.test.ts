/** Event source management (docs/api.md #conventions, #records). */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { startService, type Service } from '../helpers.js';
import { expectError, expectFieldError, expectStatus, read } from './support.js';

const DEFAULTS = {
  type: 'rest',
  name: '',
  description: '',
  enabled: true,
  transitional: false,
  consent: false,
  returns_profile: true,
  tags: [],
};

describe('event sources', () => {
  let service: Service;
  beforeEach(async () => {
    service = await startService();
  });
  afterEach(() => service.close());

  test('POST /event-source creates a source with the defaults of section 6', async () => {
    const body = expectStatus(await service.manage('POST', '/event-source', { id: 'web' }), 200);
    assert.deepEqual(body, { id: 'web', ...DEFAULTS });
    assert.deepEqual(await read(service, '/event-source/web'), body);
  });

  test('the id is generated when not given', async () => {
    const a = expectStatus(await service.manage('POST', '/event-source', { name: 'A' }), 200);
    const b = expectStatus(await service.manage('POST', '/event-source', { name: 'B' }), 200);
    assert.equal(typeof a.id, 'string');
    assert.ok(a.id.length > 0);
    assert.notEqual(a.id, b.id);
    assert.deepEqual(await read(service, `/event-source/${a.id}`), { ...DEFAULTS, id: a.id, name: 'A' });
  });

  test('every field given is kept', async () => {
    const source = {
      id: 'full',
      type: 'javascript',
      name: 'Web site',
      description: 'the shop',
      enabled: false,
      transitional: true,
      consent: true,
      returns_profile: false,
      tags: ['web', 'shop'],
    };
    assert.deepEqual(expectStatus(await service.manage('POST', '/event-source', source), 200), source);
    assert.deepEqual(await read(service, '/event-source/full'), source);
  });

  test('POST with an existing id replaces the whole record', async () => {
    await service.createSource({ id: 'web', name: 'First', consent: true, tags: ['a'] });
    await service.createSource({ id: 'web', name: 'Second' });
    assert.deepEqual(await read(service, '/event-source/web'), { ...DEFAULTS, id: 'web', name: 'Second' });
    assert.equal((await read(service, '/event-sources')).total, 1);
  });

  test('unknown fields are ignored', async () => {
    const body = expectStatus(
      await service.manage('POST', '/event-source', { id: 'x', extra: { a: 1 } }),
      200,
    );
    assert.ok(!('extra' in body));
  });

  test('GET /event-sources lists them with the total', async () => {
    assert.deepEqual(await read(service, '/event-sources'), { total: 0, result: [] });
    await service.createSource({ id: 'a' });
    await service.createSource({ id: 'b', name: 'B' });
    const list = await read(service, '/event-sources');
    assert.equal(list.total, 2);
    assert.deepEqual(list.result.map((s: { id: string }) => s.id).sort(), ['a', 'b']);
    for (const source of list.result)
      assert.deepEqual(source, await read(service, `/event-source/${source.id}`));
  });

  test('DELETE answers {"deleted": 1}, then the source is gone and a second delete is 404', async () => {
    await service.createSource({ id: 'gone' });
    assert.deepEqual(expectStatus(await service.manage('DELETE', '/event-source/gone'), 200), { deleted: 1 });
    expectError(await service.get('/event-source/gone'), 404);
    expectError(await service.manage('DELETE', '/event-source/gone'), 404);
    assert.equal((await read(service, '/event-sources')).total, 0);
  });

  test('GET of an unknown source is 404 with a detail', async () => {
    expectError(await service.get('/event-source/unknown'), 404);
  });

  test('fields of the wrong type are 422 naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ id: 'x', enabled: 'yes' }, 'enabled'],
      [{ id: 'x', transitional: 1 }, 'transitional'],
      [{ id: 'x', consent: null }, 'consent'],
      [{ id: 'x', returns_profile: 'false' }, 'returns_profile'],
      [{ id: 'x', tags: 'web' }, 'tags'],
      [{ id: 'x', name: 5 }, 'name'],
      [{ id: '' }, 'id'],
      [{ id: 'x'.repeat(129) }, 'id'],
    ];
    for (const [body, field] of cases) {
      expectFieldError(await service.manage('POST', '/event-source', body), [field]);
    }
    assert.equal((await read(service, '/event-sources')).total, 0);
  });

  test('a body that is not an object is a 422, one that does not parse a 400', async () => {
    expectError(await service.manage('POST', '/event-source', '[]'), 422);
    expectError(await service.manage('POST', '/event-source', '{"id": "x",'), 400);
    assert.equal((await read(service, '/event-sources')).total, 0);
  });

  test('sources survive a restart on the same data folder', async () => {
    await service.createSource({ id: 'kept', name: 'Kept', consent: true });
    const again = await startService({ dataDir: service.dataDir });
    try {
      assert.deepEqual(await read(again, '/event-source/kept'), {
        ...DEFAULTS,
        id: 'kept',
        name: 'Kept',
        consent: true,
      });
    } finally {
      await again.close();
    }
  });
});
