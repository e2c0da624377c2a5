/**
 * No lost update (docs/api.md #profile-rules, #merging), on both stores: hundreds of concurrent
 * requests incrementing one profile add up exactly, and many profiles identifying the same person
 * at the same moment end as one survivor holding everything.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Service } from '../helpers.js';
import { usePostgres } from '../support/postgres.js';
import { profileOf, rule, send, startOn, STORES } from './profiles-support.js';
import { allEvents, expectStatus, type Json } from './support.js';

usePostgres();

const REQUESTS = 300;

for (const store of STORES) {
  describe(`concurrent profile updates (${store})`, () => {
    let service: Service;
    before(async () => {
      service = await startOn(store);
      await rule(service, {
        id: 'count',
        event_type: 'count',
        operations: [
          { op: 'increment', path: 'traits.public.n' },
          { op: 'increment', path: 'traits.public.total', from: 'properties.amount' },
          { op: 'append', path: 'traits.public.seen', from: 'properties.tag' },
        ],
      });
      await rule(service, {
        id: 'join',
        event_type: 'join',
        operations: [
          { op: 'identify', type: 'email', from: 'properties.email' },
          { op: 'increment', path: 'traits.public.joins' },
        ],
      });
    });
    after(() => service.close());

    test(`${REQUESTS} concurrent requests on known and new sessions of one profile: every increment counts`, async () => {
      const first = await send(service, { events: [{ type: 'count', properties: { amount: 1 } }] });
      const profileId = first.profile.id as string;
      const sessions = Array.from({ length: 20 }, (_, i) => `known-${store}-${i}-${Math.random()}`);
      for (const id of sessions)
        await send(service, { session: { id }, profile: { id: profileId }, events: [{ type: 'page-view' }] });
      const answers = await Promise.all(
        Array.from({ length: REQUESTS }, (_, i) =>
          send(service, {
            // Half on the known sessions (each request a change of the stored profile), half a new visit each.
            session: { id: i % 2 ? sessions[i % sessions.length]! : `new-${store}-${i}-${Math.random()}` },
            profile: { id: profileId },
            events: [
              { type: 'count', properties: { amount: 2, tag: `t${i % 7}` } },
              { type: 'count', properties: { amount: 0.5 } },
            ],
          }),
        ),
      );
      for (const answer of answers) assert.equal(answer.profile.id, profileId);
      const profile = await profileOf(service, profileId);
      assert.equal(profile.traits.public.n, 1 + 2 * REQUESTS);
      assert.equal(profile.traits.public.total, 1 + 2.5 * REQUESTS);
      assert.deepEqual([...profile.traits.public.seen].sort(), ['t0', 't1', 't2', 't3', 't4', 't5', 't6']);
      assert.equal(profile.stats.visits, 1 + sessions.length + REQUESTS / 2);
    });

    test('60 profiles identifying one person at once end as one survivor with every visit and identity', async () => {
      const email = `crowd-${store}@example.com`;
      const profiles: string[] = [];
      for (let i = 0; i < 60; i++) {
        const answer = await send(service, {
          events: [
            { type: 'join', properties: { email: i % 3 ? undefined : `own-${store}-${i}@example.com` } },
          ],
        });
        profiles.push(answer.profile.id);
      }
      const answers = await Promise.all(
        profiles.map((id) =>
          send(service, {
            session: { id: `crowd-${id}` },
            profile: { id },
            events: [{ type: 'join', properties: { email } }],
          }),
        ),
      );
      const survivors = new Set(answers.map((a) => a.profile.id as string));
      assert.equal(survivors.size, 1, `survivors: ${[...survivors].join(', ')}`);
      const [survivorId] = [...survivors] as [string];
      const merged = answers.flatMap((a) => a.debugging.execution.merges as Json[]);
      assert.equal(merged.length, 59);
      const survivor = await profileOf(service, survivorId);
      assert.equal(survivor.stats.visits, 120);
      // Traits do not add up in a merge: the survivor's value wins (visits do).
      assert.ok(survivor.traits.public.joins <= 2);
      assert.equal(survivor.ids.length, 1 + 20);
      assert.equal(survivor.merged.length, 59);
      for (const id of profiles) assert.equal((await profileOf(service, id)).id, survivorId);
      const found = expectStatus(await service.get(`/profiles?identity=email:${email}`), 200).result;
      assert.deepEqual(
        found.map((p: Json) => p.id),
        [survivorId],
      );
      const events = await allEvents(service, { type: 'join' });
      assert.equal(events.length, 120);
      assert.ok(events.every((e) => e.profile.id === survivorId));
    });
  });
}
