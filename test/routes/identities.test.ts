/**
 * Identities and merging (docs/api.md #identities, #merging, #erasing-a-profile), on both stores:
 * normalisation and blocked values, finding a profile by identity, the merge policy, aliases that
 * keep old ids working, the user_id rule, merge chains, and erasure of everything a profile left.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { payload, type Service } from '../helpers.js';
import { usePostgres } from '../support/postgres.js';
import { profileOf, rule, send, startOn, STORES, visitor } from './profiles-support.js';
import { allEvents, expectStatus, type Json } from './support.js';

usePostgres();

for (const store of STORES) {
  describe(`identities and merging (${store})`, () => {
    let service: Service;
    before(async () => {
      service = await startOn(store);
      await rule(service, {
        id: 'identify',
        event_type: 'identify',
        operations: [
          { op: 'identify', type: 'email', from: 'properties.email' },
          { op: 'identify', type: 'user_id', from: 'properties.user_id' },
        ],
      });
      await rule(service, {
        id: 'profile-data',
        event_type: 'data',
        operations: [
          { op: 'set', path: 'traits.public.name', from: 'properties.name' },
          { op: 'set', path: 'traits.public.city', from: 'properties.city' },
          { op: 'set', path: 'traits.private.phone', from: 'properties.phone' },
          { op: 'add_segment', from: 'properties.segment' },
          { op: 'set', path: 'consents.newsletter', from: 'properties.newsletter' },
          { op: 'increment', path: 'interests.shoes', from: 'properties.shoes' },
          { op: 'increment', path: 'interests.bags', from: 'properties.bags' },
        ],
      });
    });
    after(() => service.close());

    const find = async (identity: string) =>
      expectStatus(await service.get(`/profiles?identity=${encodeURIComponent(identity)}`), 200)
        .result as Json[];

    test('identities are normalised; blocked values are ignored; a profile is found by identity', async () => {
      const v = visitor(service);
      await v.send('identify', { email: '  Ana.Norm@Example.COM ', user_id: 4242 });
      for (const blocked of ['', '   ', 'null', 'undefined', 'Anonymous', '0', '-1', 0, -1, true, { a: 1 }]) {
        await v.send('identify', { email: blocked, user_id: blocked });
      }
      const p = await v.profile();
      assert.deepEqual(p.ids, [
        { type: 'email', value: 'ana.norm@example.com' },
        { type: 'user_id', value: '4242' },
      ]);
      assert.deepEqual(
        (await find('email: ANA.norm@example.com')).map((r) => r.id),
        [v.id],
      );
      assert.deepEqual(
        (await find('user_id:4242')).map((r) => r.id),
        [v.id],
      );
      assert.deepEqual(await find('email:nobody@example.com'), []);
      assert.deepEqual(await find('email:anonymous'), []);
      for (const bad of ['email', ':x', 'Email:x', 'e-mail:x']) {
        const res = await service.get(`/profiles?identity=${encodeURIComponent(bad)}`);
        assert.equal(res.statusCode, 422, bad);
      }
    });

    test('a shared identity merges the newer profile into the one that held it first, by the policy', async () => {
      const ana = visitor(service);
      await ana.send('data', {
        name: 'Ana',
        city: 'Porto',
        segment: 'a',
        newsletter: { granted: false },
        shoes: 2,
      });
      await ana.send('identify', { email: 'ana@example.com' });
      const insert = (await ana.profile()).metadata.time.insert;
      // A second device: another profile, with a second visit.
      const phone = visitor(service);
      await phone.send('data', { name: 'Anna', phone: '+351', segment: 'b', shoes: 3, bags: 1 });
      await send(service, { profile: { id: phone.id }, events: [{ type: 'page-view' }] });
      await phone.send('data', { newsletter: { granted: true } });
      const phoneId = phone.id;
      const merging = await phone.send('identify', { email: 'ANA@example.com' });

      assert.equal(merging.profile.id, ana.id, 'the merging request answers the survivor');
      assert.deepEqual(merging.debugging.execution.merges, [{ merged: phoneId, into: ana.id }]);
      assert.deepEqual(merging.debugging.profile.ids, [phoneId, ana.id]);
      assert.ok(merging.debugging.logs.some((l: Json) => /merged into/.test(l.message)));
      const survivor = await profileOf(service, ana.id);
      assert.equal(survivor.id, ana.id);
      assert.deepEqual(survivor.traits, {
        public: { name: 'Ana', city: 'Porto' },
        private: { phone: '+351' },
      });
      assert.equal(survivor.stats.visits, 3);
      assert.equal(survivor.metadata.time.visit.count, 3);
      assert.equal(survivor.metadata.time.insert, insert);
      assert.deepEqual(survivor.segments, ['a', 'b']);
      assert.deepEqual(survivor.consents, { newsletter: { granted: true } }, 'the newer consent');
      assert.deepEqual(survivor.interests, { shoes: 5, bags: 1 });
      assert.deepEqual(survivor.ids, [{ type: 'email', value: 'ana@example.com' }]);
      assert.deepEqual(
        survivor.merged.map((m: Json) => m.id),
        [phoneId],
      );

      // The merged id is an alias; its sessions and events now name the survivor.
      assert.deepEqual(await profileOf(service, phoneId), survivor);
      assert.equal(expectStatus(await service.get(`/session/${phone.session}`), 200).profile.id, ana.id);
      assert.deepEqual(await allEvents(service, { profile_id: phoneId }), []);
      const events = await allEvents(service, { profile_id: ana.id });
      assert.equal(events.length, 6);
      assert.ok(events.every((e) => e.profile.id === ana.id));

      // A tracker still holding the merged id continues as the survivor, on its known session or a new one.
      const known = await phone.send('page-view');
      assert.equal(known.profile.id, ana.id);
      const fresh = await send(service, { profile: { id: phoneId }, events: [{ type: 'page-view' }] });
      assert.equal(fresh.profile.id, ana.id);
      assert.equal((await profileOf(service, ana.id)).stats.visits, 4);
    });

    test('two profiles that each hold a different user_id never merge; a profile holds one user_id', async () => {
      const a = visitor(service);
      await a.send('identify', { user_id: 'u-a', email: 'a-shared@example.com' });
      const b = visitor(service);
      await b.send('identify', { user_id: 'u-b' });
      const refused = await b.send('identify', { email: 'a-shared@example.com' });
      assert.equal(refused.profile.id, b.id);
      assert.deepEqual(refused.debugging.execution.merges, []);
      assert.ok(
        refused.debugging.logs.some((l: Json) => /not attached.*different user_ids/.test(l.message)),
        JSON.stringify(refused.debugging.logs),
      );
      assert.deepEqual((await b.profile()).ids, [{ type: 'user_id', value: 'u-b' }]);
      const second = await b.send('identify', { user_id: 'u-b2' });
      assert.ok(second.debugging.logs.some((l: Json) => /already has user_id u-b/.test(l.message)));
      assert.deepEqual((await b.profile()).ids, [{ type: 'user_id', value: 'u-b' }]);
      assert.deepEqual(await find('user_id:u-b2'), []);
      // Without a user_id of its own, a profile merges into the one holding the user_id.
      const c = visitor(service);
      await c.send('identify', { user_id: 'u-a' });
      assert.equal((await profileOf(service, c.id)).id, a.id);
    });

    test('merge chains and cycles: aliases follow the last survivor; an identity of the survivor on an alias changes nothing', async () => {
      const a = visitor(service);
      await a.send('identify', { email: 'chain-b@example.com' });
      const b = visitor(service);
      await b.send('identify', { email: 'chain-a@example.com' });
      const bId = b.id;
      // a holds chain-b first: b, taking it, merges into a.
      const merged = await b.send('identify', { email: 'chain-b@example.com' });
      assert.equal(merged.profile.id, a.id);
      const c = visitor(service);
      await c.send('identify', { email: 'chain-c@example.com' });
      const aId = a.id;
      // a (with b inside) takes an identity c held first: a merges into c.
      await a.send('identify', { email: 'chain-c@example.com' });
      for (const id of [aId, bId, c.id]) assert.equal((await profileOf(service, id)).id, c.id, id);
      // The old id of b sends b's own identity again, on a new session: it is the survivor's already.
      const again = await send(service, {
        profile: { id: bId },
        events: [{ type: 'identify', properties: { email: 'chain-a@example.com' } }],
      });
      assert.equal(again.profile.id, c.id);
      assert.deepEqual(again.debugging.execution.merges, []);
      const survivor = await profileOf(service, c.id);
      assert.deepEqual(survivor.ids.map((i: Json) => i.value).sort(), [
        'chain-a@example.com',
        'chain-b@example.com',
        'chain-c@example.com',
      ]);
      assert.deepEqual(survivor.merged.map((m: Json) => m.id).sort(), [aId, bId].sort());
    });

    test('erasing a profile erases its identities, aliases and quarantined requests', async () => {
      const kept = visitor(service);
      await kept.send('identify', { email: 'kept@example.com' });
      const gone = visitor(service);
      await gone.send('identify', { email: 'gone@example.com' });
      const merged = visitor(service);
      const merging = await merged.send('identify', { email: 'gone@example.com' });
      const mergedId = merging.debugging.execution.merges[0].merged as string;
      assert.equal(merging.profile.id, gone.id);
      expectStatus(
        await service.manage('POST', '/event/management', {
          event_type: 'strict',
          validation: { json_schema: { 'event@properties': { type: 'object', required: ['x'] } } },
        }),
        200,
      );
      const refuse = async (body: Json) =>
        expectStatus(await service.post('/track', payload({ ...body, events: [{ type: 'strict' }] })), 406);
      await refuse({ session: { id: gone.session } });
      await refuse({ session: { id: merged.session } });
      await refuse({ session: { id: `new-${mergedId}` }, profile: { id: mergedId } });
      await refuse({ session: { id: kept.session } });
      const quarantined = expectStatus(await service.get('/event/rejected?event_type=strict'), 200).result;
      assert.equal(quarantined.length, 4);

      // By its alias: the survivor is erased.
      const erased = expectStatus(await service.manage('DELETE', `/profile/${mergedId}`), 200);
      assert.deepEqual(erased.deleted, {
        profiles: 1,
        sessions: 2,
        events: 2,
        identities: 1,
        aliases: 1,
        rejected: 3,
      });
      assert.deepEqual(await find('email:gone@example.com'), []);
      for (const id of [gone.id, mergedId])
        assert.equal((await service.get(`/profile/${id}`)).statusCode, 404);
      const left = expectStatus(await service.get('/event/rejected?event_type=strict'), 200).result;
      assert.deepEqual(
        left.map((r: Json) => r.session_id),
        [kept.session],
      );
      assert.deepEqual(
        (await find('email:kept@example.com')).map((p) => p.id),
        [kept.id],
      );
      // The identity is free again: a new profile may take it.
      const later = visitor(service);
      await later.send('identify', { email: 'gone@example.com' });
      assert.deepEqual(
        (await find('email:gone@example.com')).map((p) => p.id),
        [later.id],
      );
    });
  });
}
