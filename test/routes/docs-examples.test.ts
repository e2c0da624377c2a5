/**
 * /docs/json: every response is named, every request body and every success response has an
 * example, every status a route can answer is listed, and the request examples work as they are.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AUTH, startService, type Service } from '../helpers.js';
import { expectStatus, type Json } from './support.js';

/**
 * The statuses each operation can answer (besides 408/431, answered before any route; 415 needs a
 * body, which only the POST routes read).
 */
const STATUSES: Record<string, number[]> = {
  'get /': [200, 302, 503],
  'get /health': [200, 503],
  'post /track': [200, 400, 401, 406, 413, 415, 422, 429, 503],
  'post /collect/{event_type}/{source_id}': [200, 400, 401, 406, 413, 415, 422, 429, 503],
  'post /event/management': [200, 400, 401, 413, 415, 422, 503],
  'get /event/management': [200, 401, 503],
  'get /event/management/{event_type}': [200, 400, 401, 404, 422, 503],
  'delete /event/management/{event_type}': [200, 400, 401, 404, 422, 503],
  'post /event-source': [200, 400, 401, 413, 415, 422, 503],
  'get /event-sources': [200, 401, 503],
  'get /event-source/{id}': [200, 400, 401, 404, 422, 503],
  'delete /event-source/{id}': [200, 400, 401, 404, 422, 503],
  'get /event/{id}': [200, 400, 401, 404, 422, 503],
  'get /session/{id}': [200, 400, 401, 404, 422, 503],
  'get /profile/{id}': [200, 400, 401, 404, 422, 503],
  'delete /profile/{id}': [200, 400, 401, 404, 422, 503],
  'get /profiles': [200, 401, 422, 503],
  'post /profile-rule': [200, 400, 401, 413, 415, 422, 503],
  'get /profile-rules': [200, 401, 422, 503],
  'get /profile-rule/{id}': [200, 400, 401, 404, 422, 503],
  'delete /profile-rule/{id}': [200, 400, 401, 404, 422, 503],
  'get /events': [200, 401, 422, 503],
  'get /events/stats': [200, 401, 422, 503],
  'get /event/rejected': [200, 401, 422, 503],
  'get /event/rejected/{id}': [200, 400, 401, 404, 422, 503],
  'post /event/rejected/{id}/replay': [200, 400, 401, 404, 406, 410, 413, 415, 422, 429, 503],
  'get /metrics': [200, 401, 503],
  'post /destination': [200, 400, 401, 413, 415, 422, 503],
  'get /destinations': [200, 401, 503],
  'get /destination/{id}': [200, 400, 401, 404, 422, 503],
  'delete /destination/{id}': [200, 400, 401, 404, 422, 503],
  'get /destination/{id}/failed': [200, 400, 401, 404, 422, 503],
  'post /destination/{id}/failed/{batch_id}/retry': [200, 400, 401, 404, 413, 415, 422, 503],
};

describe('documentation examples and responses', () => {
  let service: Service;
  let doc: Json;
  before(async () => {
    service = await startService();
    doc = expectStatus(await service.app.inject({ method: 'GET', url: '/docs/json' }), 200);
  });
  after(() => service.close());

  const operations = (): [string, Json][] =>
    Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
      Object.entries(item as Json).map(([method, op]): [string, Json] => [`${method} ${path}`, op]),
    );

  test('every status each route can answer is documented, and only those', () => {
    assert.deepEqual(
      operations()
        .map(([name]) => name)
        .sort(),
      Object.keys(STATUSES).sort(),
    );
    for (const [name, op] of operations()) {
      const documented = Object.keys(op.responses)
        .map(Number)
        .sort((a, b) => a - b);
      assert.deepEqual(documented, STATUSES[name], name);
    }
  });

  test('every response has a name of its own (no "Default Response"); 429 and 503 document Retry-After', () => {
    for (const [name, op] of operations()) {
      for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
        assert.equal(typeof response.description, 'string', `${name} ${status}`);
        assert.notEqual(response.description, 'Default Response', `${name} ${status}`);
        assert.ok(response.description.length > 3, `${name} ${status}`);
        if (status === '429' || status === '503')
          assert.ok(response.headers?.['retry-after'], `${name} ${status}`);
      }
    }
  });

  test('every request body and every response with a body has an example; errors have a detail', () => {
    for (const [name, op] of operations()) {
      const body = op.requestBody?.content?.['application/json'];
      if (op.requestBody) assert.ok(body?.example !== undefined, `${name}: request body example`);
      for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
        if (status === '302') continue;
        const [media] = Object.values((response.content ?? {}) as Record<string, Json>);
        assert.ok(media, `${name} ${status}: content`);
        if (name === 'get /metrics' && status === '200') continue; // Prometheus text
        assert.ok(media.example !== undefined, `${name} ${status}: example`);
        if (Number(status) >= 400) assert.ok(media.example.detail, `${name} ${status}: detail`);
      }
    }
  });

  test('the request examples work as they are, in the order the description gives', async () => {
    const example = (name: string) => {
      const [method, path] = name.split(' ');
      return doc.paths[path!][method!].requestBody.content['application/json'].example;
    };
    const param = (name: string, key: string) => {
      const [method, path] = name.split(' ');
      const params = doc.paths[path!][method!].parameters as Json[];
      return params.find((p) => p.name === key)!.example as string;
    };
    expectStatus(await service.manage('POST', '/event-source', example('post /event-source')), 200);
    expectStatus(await service.manage('POST', '/event/management', example('post /event/management')), 200);
    const rule = expectStatus(
      await service.manage('POST', '/profile-rule', example('post /profile-rule')),
      200,
    );
    assert.equal(rule.id, param('get /profile-rule/{id}', 'id'));
    const tracked = expectStatus(await service.post('/track', example('post /track')), 200);
    assert.equal(tracked.session.id, example('post /track').session.id);
    const collectUrl = `/collect/${param('post /collect/{event_type}/{source_id}', 'event_type')}/${param(
      'post /collect/{event_type}/{source_id}',
      'source_id',
    )}`;
    expectStatus(await service.post(collectUrl, example('post /collect/{event_type}/{source_id}')), 200);
    const events = expectStatus(await service.get('/events?source_id=demo'), 200).result as Json[];
    assert.deepEqual(events.map((e) => e.type).sort(), ['coupon-received', 'page-view']);
    // The path examples of the management routes name what the body examples created.
    expectStatus(await service.get(`/event-source/${param('get /event-source/{id}', 'id')}`), 200);
    expectStatus(
      await service.get(`/event/management/${param('get /event/management/{event_type}', 'event_type')}`),
      200,
    );
    expectStatus(
      await service.app.inject({
        method: 'GET',
        url: `/session/${example('post /track').session.id}`,
        headers: AUTH,
      }),
      200,
    );
  });
});
