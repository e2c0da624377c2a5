/**
 * The rule cache (docs/api.md #rule-cache): the rules of an event type are cached per process for
 * EVENT_VALIDATOR_TTL seconds ("no rules" too); a change made elsewhere applies once that has passed,
 * and 0 turns the cache off.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, test } from 'node:test';
import { payload, startService, tempDir, type Service } from '../helpers.js';
import { expectStatus } from './support.js';

const counting = {
  id: 'count',
  event_type: 'counted',
  operations: [{ op: 'increment', path: 'traits.public.n' }],
};

/** Two service instances on one data folder: `other` stands for another process. */
async function pair(ttlSec: number): Promise<[Service, Service]> {
  const dataDir = tempDir();
  const here = await startService({ dataDir, validatorTtlSec: ttlSec });
  const other = await startService({ dataDir, validatorTtlSec: ttlSec });
  await here.createSource();
  return [here, other];
}

/** The profile's count after one `counted` event on a session of its own. */
async function count(service: Service, session: string): Promise<number | undefined> {
  const answer = expectStatus(
    await service.post('/track', payload({ session: { id: session }, events: [{ type: 'counted' }] })),
    200,
  );
  const profile = expectStatus(await service.get(`/profile/${answer.profile.id}`), 200);
  return profile.traits.public.n as number | undefined;
}

describe('rule cache (docs/api.md #rule-cache)', () => {
  test('a rule saved elsewhere applies once the TTL has passed, not before', async (t) => {
    const [here, other] = await pair(4);
    t.after(async () => Promise.all([here.close(), other.close()]));
    assert.equal(await count(here, 'a'), undefined, 'no rules yet (cached as such)');
    expectStatus(await other.manage('POST', '/profile-rule', counting), 200);
    assert.equal(await count(here, 'b'), undefined, 'the cached "no rules" is still used');
    assert.equal(await count(other, 'c'), 1, 'the process that saved it applies it at once');
    await sleep(4100);
    assert.equal(await count(here, 'd'), 1, 'after the TTL the rule applies');
  });

  test('EVENT_VALIDATOR_TTL=0 disables the cache', async (t) => {
    const [here, other] = await pair(0);
    t.after(async () => Promise.all([here.close(), other.close()]));
    assert.equal(await count(here, 'a'), undefined);
    expectStatus(await other.manage('POST', '/profile-rule', counting), 200);
    assert.equal(await count(here, 'b'), 1);
    expectStatus(await other.manage('DELETE', '/profile-rule/count'), 200);
    assert.equal(await count(here, 'c'), undefined);
  });
});
