/**
 * No validation keyword makes a request cost more than linear time in its size (docs/security.md).
 * Each schema below is applied to a body of about 470 KB; the request must cost no more than a small
 * multiple of the same body sent to a type without a schema. Ajv's own `uniqueItems` compared every
 * pair of items: 15 s for this body, several hundred times the plain request.
 */
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import { startService, type Json, type Service } from '../helpers.js';
import { expectStatus } from './support.js';

const ITEMS = 20_000; // about 470 KB of items like {"n":12345,"tag":"item"}
const items = Array.from({ length: ITEMS }, (_, n) => ({ n, tag: 'item' }));
/** How many times the plain request a checked one may cost: linear work stays far below it. */
const MAX_FACTOR = 20;

const schemas: Record<string, Json> = {
  uniqueItems: { type: 'array', uniqueItems: true },
  contains: { type: 'array', contains: { type: 'object', required: ['missing'] }, minContains: 0 },
  enum: { type: 'array', items: { type: 'object', properties: { tag: { enum: ['item', 'other'] } } } },
  propertyNames: { type: 'array', items: { propertyNames: { pattern: '^[a-z]+$' } } },
  patternProperties: { type: 'array', items: { patternProperties: { '^(a+)+$': { type: 'string' } } } },
};

async function timed(
  service: Service,
  type: string,
  list: unknown[],
): Promise<{ ms: number; status: number }> {
  const body = {
    source: { id: 'src-1' },
    session: { id: `s-${type}-${Math.random()}` },
    events: [{ type, properties: { list }, options: { save: false } }],
  };
  const started = performance.now();
  const res = await service.post('/track', body);
  return { ms: performance.now() - started, status: res.statusCode };
}

test('schema keywords cost linear time on a 470 KB array', async (t) => {
  const service = await startService();
  t.after(() => service.close());
  await service.createSource();
  assert.ok(JSON.stringify(items).length > 450_000);
  for (const [name, schema] of Object.entries(schemas)) {
    const res = await service.manage('POST', '/event/management', {
      event_type: name,
      validation: { json_schema: { 'event@properties.list': schema } },
    });
    expectStatus(res, 200, name);
  }
  const baseline = async () => (await timed(service, 'no-schema', items)).ms;
  await baseline(); // warm-up
  const plain = Math.min(await baseline(), await baseline(), await baseline());

  for (const name of Object.keys(schemas)) {
    await timed(service, name, items.slice(0, 100)); // compiles and warms the validator
    const { ms, status } = await timed(service, name, items);
    t.diagnostic(`${name}: ${ms.toFixed(0)} ms against ${plain.toFixed(0)} ms without a schema`);
    assert.equal(status, 200, name);
    assert.ok(
      ms < plain * MAX_FACTOR + 100,
      `${name} took ${ms.toFixed(0)} ms (plain ${plain.toFixed(0)} ms)`,
    );
  }
});

test('uniqueItems still refuses a duplicate, also of objects with keys in another order', async (t) => {
  const service = await startService();
  t.after(() => service.close());
  await service.createSource();
  await service.manage('POST', '/event/management', {
    event_type: 'tags',
    validation: { json_schema: { 'event@properties.list': { type: 'array', uniqueItems: true } } },
  });
  const send = (list: unknown[]) =>
    service.post('/track', {
      source: { id: 'src-1' },
      session: { id: `s-${Math.random()}` },
      events: [{ type: 'tags', properties: { list } }],
    });
  expectStatus(await send([1, '1', [1], { a: 1 }, null, 'null', { a: 1, b: 2 }]), 200);
  const refused = expectStatus(await send([...items.slice(0, 1000), { tag: 'item', n: 17 }]), 406);
  assert.equal(
    refused.detail,
    'validation failed with error: event@properties.list: must NOT have duplicate items (items ## 1000 and 17 are identical)',
  );
});
