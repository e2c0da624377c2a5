/** Processes contending for one known session take turns: every request is answered 200 and stored (contract §3.4, §8). */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { payload, startService, type Service } from '../helpers.js';
import { read, track, type Json } from './support.js';

const N = 20;
const fresh = () => `session-${Math.random().toString(36).slice(2)}`;

describe('several processes sharing one database', () => {
  let a: Service;
  let b: Service;
  beforeEach(async () => {
    a = await startService();
    b = await startService({ dataDir: a.dataDir });
    await a.createSource();
  });
  afterEach(async () => {
    await b.close();
    await a.close();
  });

  /** Requests alternate between the two services, all started at once. */
  function both(make: (i: number) => Json): Promise<Json[]> {
    return Promise.all(Array.from({ length: N }, (_, i) => track(i % 2 === 0 ? a : b, make(i))));
  }

  test('context updates of one session from both processes are all kept', async () => {
    const sid = fresh();
    await track(a, payload({ session: { id: sid } }));
    await both((i) => payload({ session: { id: sid }, context: { [`k${i}`]: i } }));
    const session = await read(a, `/session/${sid}`);
    assert.deepEqual(session.context, Object.fromEntries(Array.from({ length: N }, (_, i) => [`k${i}`, i])));
  });
});
