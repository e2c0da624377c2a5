/** GET /health, GET /docs and GET /docs/json (docs/api.md #settings). */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startService, type Service } from '../helpers.js';
import { expectStatus, type Json } from './support.js';

/** Every endpoint of docs/api.md #conventions as the OpenAPI document names it, with whether it takes a body. */
const CONTRACT_ROUTES: [string, string, boolean][] = [
  ['post', '/track', true],
  ['post', '/collect/{event_type}/{source_id}', true],
  ['post', '/event/management', true],
  ['get', '/event/management', false],
  ['get', '/event/management/{event_type}', false],
  ['delete', '/event/management/{event_type}', false],
  ['post', '/event-source', true],
  ['get', '/event-sources', false],
  ['get', '/event-source/{id}', false],
  ['delete', '/event-source/{id}', false],
  ['get', '/event/{id}', false],
  ['get', '/session/{id}', false],
  ['get', '/profile/{id}', false],
  ['get', '/events', false],
  ['delete', '/profile/{id}', false],
  ['get', '/health', false],
];

const METHODS = new Set(['get', 'post', 'put', 'patch', 'delete']);

/** Follows a local `$ref` (`#/components/schemas/X`) in the document. */
function resolve(doc: Json, schema: Json): Json {
  if (typeof schema.$ref !== 'string') return schema;
  assert.match(schema.$ref, /^#\//, `only local references: ${schema.$ref}`);
  let target: Json | undefined = doc;
  for (const part of schema.$ref.slice(2).split('/')) target = target?.[part];
  assert.ok(target && typeof target === 'object', `unresolved reference ${schema.$ref}`);
  return target;
}

/** Every `$ref` inside `value`. */
function refs(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) refs(item, found);
  else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key === '$ref' && typeof item === 'string') found.push(item);
      else refs(item, found);
    }
  }
  return found;
}

function isSchema(doc: Json, schema: unknown): boolean {
  if (!schema || typeof schema !== 'object') return false;
  const resolved = resolve(doc, schema as Json);
  return ['type', 'properties', 'anyOf', 'oneOf', 'allOf', 'items'].some((key) => key in resolved);
}

describe('health and documentation', () => {
  let service: Service;
  let doc: Json;
  before(async () => {
    service = await startService();
    const res = await service.app.inject({ method: 'GET', url: '/docs/json' });
    doc = expectStatus(res, 200);
    assert.match(String(res.headers['content-type']), /^application\/json/);
  });
  after(() => service.close());

  test('GET /health answers 200 {"status":"ok"} without a token', async () => {
    const res = await service.app.inject({ method: 'GET', url: '/health' });
    assert.deepEqual(expectStatus(res, 200), { status: 'ok' });
  });

  test('GET /docs serves the interactive documentation', async () => {
    let res = await service.app.inject({ method: 'GET', url: '/docs' });
    for (let hops = 0; hops < 3 && res.statusCode >= 300 && res.statusCode < 400; hops++) {
      res = await service.app.inject({ method: 'GET', url: String(res.headers.location) });
    }
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /text\/html/);
    assert.match(res.body, /<html/i);
  });

  test('GET /docs/json is an OpenAPI document', () => {
    assert.match(String(doc.openapi ?? doc.swagger), /^3\./);
    assert.equal(typeof doc.info?.title, 'string');
    assert.equal(typeof doc.info?.version, 'string');
  });

  test('documents every documented endpoint', () => {
    for (const [method, path] of CONTRACT_ROUTES) {
      assert.ok(doc.paths?.[path]?.[method], `${method.toUpperCase()} ${path} is not documented`);
    }
  });

  test('every operation has a summary, tags and a schema for each response', () => {
    let operations = 0;
    for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
      for (const [method, op] of Object.entries(item)) {
        if (!METHODS.has(method)) continue;
        operations++;
        const name = `${method.toUpperCase()} ${path}`;
        assert.equal(typeof op.summary, 'string', `${name}: no summary`);
        assert.ok(op.summary.trim().length > 0, `${name}: empty summary`);
        assert.ok(Array.isArray(op.tags) && op.tags.length > 0, `${name}: no tags`);
        const responses = Object.entries(op.responses ?? {}) as [string, Json][];
        assert.ok(
          responses.some(([code]) => code.startsWith('2')),
          `${name}: no success response`,
        );
        for (const [code, response] of responses) {
          const resolved = resolve(doc, response);
          if (code === '204' || code === '302') continue; // no body
          const contents = Object.values((resolved.content ?? {}) as Record<string, Json>);
          assert.ok(contents.length > 0, `${name} ${code}: no response content`);
          for (const content of contents) {
            assert.ok(isSchema(doc, content.schema), `${name} ${code}: no response schema`);
          }
        }
      }
    }
    assert.ok(operations >= CONTRACT_ROUTES.length);
  });

  test('every route that takes a body documents it with a schema', () => {
    for (const [method, path, hasBody] of CONTRACT_ROUTES) {
      if (!hasBody) continue;
      const body = doc.paths[path][method].requestBody;
      assert.ok(body, `${method.toUpperCase()} ${path}: no requestBody`);
      const schema = body.content?.['application/json']?.schema;
      assert.ok(isSchema(doc, schema), `${method.toUpperCase()} ${path}: no request body schema`);
    }
  });

  test('error responses are documented with the detail field', () => {
    const trackResponses = doc.paths['/track'].post.responses as Record<string, Json>;
    for (const code of ['400', '401', '413', '422']) {
      assert.ok(trackResponses[code], `/track: ${code} not documented`);
      const schema = resolve(doc, trackResponses[code].content['application/json'].schema);
      assert.ok(schema.properties?.detail, `/track ${code}: no detail`);
    }
    for (const [method, path] of CONTRACT_ROUTES) {
      const op = doc.paths[path][method];
      const name = `${method.toUpperCase()} ${path}`;
      for (const [code, response] of Object.entries(op.responses as Record<string, Json>)) {
        if (!/^[45]/.test(code)) continue;
        const content = resolve(doc, response).content ?? {};
        assert.deepEqual(Object.keys(content), ['application/json'], `${name} ${code}: errors are JSON`);
        assert.ok(resolve(doc, content['application/json'].schema).properties?.detail, `${name} ${code}`);
      }
      if (path === '/health' || path === '/track' || path.startsWith('/collect')) continue;
      assert.ok(op.responses['401'], `${name}: 401 not documented`);
    }
  });

  test('every reference in the document resolves', () => {
    for (const ref of refs(doc)) resolve(doc, { $ref: ref });
  });

  test('the tracking endpoints document their query and path parameters', () => {
    const trackParams = (doc.paths['/track'].post.parameters ?? []) as Json[];
    assert.ok(trackParams.some((p) => p.name === 'profile_less' && p.in === 'query'));
    const collectParams = (doc.paths['/collect/{event_type}/{source_id}'].post.parameters ?? []) as Json[];
    for (const name of ['event_type', 'source_id']) {
      assert.ok(
        collectParams.some((p) => p.name === name && p.in === 'path'),
        `${name} not documented`,
      );
    }
    const eventsParams = (doc.paths['/events'].get.parameters ?? []) as Json[];
    for (const name of ['profile_id', 'session_id', 'type', 'source_id', 'limit', 'cursor']) {
      assert.ok(
        eventsParams.some((p) => p.name === name && p.in === 'query'),
        `${name} not documented`,
      );
    }
  });
});

test('every management operation is documented as needing the bearer token; tracking ones are open', async (t) => {
  const service = await startService();
  t.after(() => service.close());
  const doc = (await service.app.inject({ method: 'GET', url: '/docs/json' })).json() as {
    paths: Record<string, Record<string, { security?: unknown }>>;
  };
  const open = ['/', '/track', '/collect/{event_type}/{source_id}', '/health'];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (open.includes(path)) assert.equal(op.security, undefined, `${method} ${path}`);
      else assert.deepEqual(op.security, [{ bearerAuth: [] }], `${method} ${path}`);
    }
  }
});
