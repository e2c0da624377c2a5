import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, test } from 'node:test';
import { payload, startService, tempDir, type Service } from '../helpers.js';

const priceRequired = {
  event_type: 'purchase',
  validation: { json_schema: { 'event@properties': { type: 'object', required: ['price'] } } },
};
const badPurchase = () => payload({ events: [{ type: 'purchase', properties: {} }] });

/** Two service instances on one data folder: `other` stands for another process. */
async function pair(ttlSec: number): Promise<[Service, Service]> {
  const dataDir = tempDir();
  const here = await startService({ dataDir, validatorTtlSec: ttlSec });
  const other = await startService({ dataDir, validatorTtlSec: ttlSec });
  await here.createSource();
  return [here, other];
}

describe('schema cache (docs/api.md #schema-cache)', () => {
  test('a change made elsewhere is used once the TTL has passed, not before', async (t) => {
    // A TTL of a few seconds, so that a busy machine still sends the second request within it.
    const ttlMs = 4000;
    const [here, other] = await pair(ttlMs / 1000);
    t.after(async () => Promise.all([here.close(), other.close()]));
    const cachedFrom = Date.now();
    assert.equal(
      (await here.post('/track', badPurchase())).statusCode,
      200,
      'no schema yet (cached as a miss)',
    );
    await other.manage('POST', '/event/management', priceRequired);
    const status = (await here.post('/track', badPurchase())).statusCode;
    const withinTtl = Date.now() - cachedFrom < ttlMs;
    assert.ok(withinTtl, 'the machine took longer than the TTL for two requests');
    assert.equal(status, 200, 'the cached miss is still used');
    await sleep(cachedFrom + ttlMs + 100 - Date.now());
    assert.equal(
      (await here.post('/track', badPurchase())).statusCode,
      406,
      'after the TTL the schema applies',
    );
  });

  test('EVENT_VALIDATOR_TTL=0 disables the cache', async (t) => {
    const [here, other] = await pair(0);
    t.after(async () => Promise.all([here.close(), other.close()]));
    assert.equal((await here.post('/track', badPurchase())).statusCode, 200);
    await other.manage('POST', '/event/management', priceRequired);
    assert.equal((await here.post('/track', badPurchase())).statusCode, 406);
  });

  test('a change made through this process applies here at once, whatever the TTL', async (t) => {
    const service = await startService({ validatorTtlSec: 3600 });
    t.after(() => service.close());
    await service.createSource();
    assert.equal((await service.post('/track', badPurchase())).statusCode, 200);
    await service.manage('POST', '/event/management', priceRequired);
    assert.equal((await service.post('/track', badPurchase())).statusCode, 406, 'added');
    await service.manage('POST', '/event/management', {
      ...priceRequired,
      validation: { ...priceRequired.validation, enabled: false },
    });
    assert.equal((await service.post('/track', badPurchase())).statusCode, 200, 'disabled');
    await service.manage('POST', '/event/management', priceRequired);
    assert.equal((await service.post('/track', badPurchase())).statusCode, 406, 'enabled again');
    await service.manage('DELETE', '/event/management/purchase');
    assert.equal((await service.post('/track', badPurchase())).statusCode, 200, 'deleted');
  });
});
