/**
 * Hostile input reaching profile rules through /track (docs/api.md #operations, #identities,
 * docs/security.md), on both stores: prototype keys copied into traits, values too large to keep,
 * overflowing numbers, identities that name nobody, a thousand events at once, and merge cycles.
 * Each answers 200 (or the 4xx of its shape), never a 500; nothing reaches a prototype; no profile
 * is lost; and what a profile keeps stays bounded.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Service } from '../helpers.js';
import { usePostgres } from '../support/postgres.js';
import { profileOf, rule, send, startOn, STORES } from '../routes/profiles-support.js';
import { expectStatus, prototypeKeys, type Json } from './support.js';

usePostgres();

for (const store of STORES) {
  describe(`hostile input to profile rules (${store})`, () => {
    let service: Service;
    let snapshot: string;
    before(async () => {
      snapshot = prototypeKeys();
      service = await startOn(store);
      await rule(service, {
        id: 'hostile',
        event_type: 'h',
        operations: [
          { op: 'set', path: 'traits.public.props', from: 'properties.props' },
          { op: 'set', path: 'traits.public.blob', from: 'properties.blob' },
          { op: 'append', path: 'traits.public.tags', from: 'properties.tags' },
          { op: 'increment', path: 'traits.public.n', from: 'properties.n' },
          { op: 'identify', type: 'email', from: 'properties.email' },
          { op: 'add_segment', from: 'properties.segment' },
          { op: 'set', path: 'consents.c', from: 'properties.c' },
        ],
      });
    });
    after(() => service.close());

    /** A raw /track body for one visitor (a session of its own unless given). */
    const raw = async (session: string, events: string, profile?: string) => {
      const body = `{"source":{"id":"src-1"},"session":{"id":"${session}"},${profile ? `"profile":{"id":"${profile}"},` : ''}"options":{"debugger":true},"events":${events}}`;
      const res = await service.post('/track', body);
      return expectStatus(res, 200, `${session}: ${res.body.slice(0, 200)}`);
    };

    test('prototype keys copied from an event are own keys of the profile, nothing is polluted', async () => {
      const answer = await raw(
        `proto-${store}`,
        '[{"type":"h","properties":{"props":{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}}},"c":{"__proto__":{"x":1}}}}]',
      );
      const profile = await profileOf(service, answer.profile.id);
      assert.ok(Object.hasOwn(profile.traits.public.props, '__proto__'));
      assert.deepEqual(Object.keys(profile.traits.public.props), ['__proto__', 'constructor']);
      assert.ok(Object.hasOwn(profile.consents.c, '__proto__'));
      assert.equal(({} as Json).polluted, undefined);
      assert.equal(prototypeKeys(), snapshot);
    });

    test('values too large to keep are skipped; arrays and segments stay bounded; numbers stay finite', async () => {
      const big = 'x'.repeat(900_000);
      const first = await raw(
        `big-${store}`,
        JSON.stringify([{ type: 'h', properties: { blob: big, n: 1e308 } }]),
      );
      const id = first.profile.id as string;
      const events = Array.from({ length: 300 }, (_, i) => ({
        type: 'h',
        properties: { tags: [`t${i}`, { i }], segment: `s${i}`, n: 1e308 },
      }));
      await raw(`big-${store}`, JSON.stringify(events));
      await raw(
        `big-${store}`,
        JSON.stringify([
          { type: 'h', properties: { tags: Array.from({ length: 5000 }, (_, i) => `many-${i}`) } },
        ]),
      );
      const profile = await profileOf(service, id);
      assert.equal(profile.traits.public.blob, undefined, 'a value over 16 KiB is not kept');
      assert.equal(profile.traits.public.n, 1e308, 'an increment past the largest number is not applied');
      assert.equal(profile.traits.public.tags.length, 100);
      assert.deepEqual(profile.traits.public.tags.slice(-2), ['t299', { i: 299 }]);
      assert.equal(profile.segments.length, 200);
      assert.ok(
        JSON.stringify(profile).length < 64 * 1024,
        `profile of ${JSON.stringify(profile).length} bytes`,
      );
    });

    test('identities that name nobody, or too many, are ignored', async () => {
      const values = [
        '',
        ' ',
        'null',
        'NULL',
        'undefined',
        'anonymous',
        '0',
        '-1',
        0,
        -1,
        null,
        true,
        {},
        [],
        ['a@x'],
        { email: 'a@x' },
        'a\u0000@x',
        'tab\t@x',
        'x'.repeat(10_000),
        'inf@x\u0001',
      ];
      const events = values.map((email) => ({ type: 'h', properties: { email } }));
      const answer = await raw(`nobody-${store}`, JSON.stringify(events));
      assert.deepEqual((await profileOf(service, answer.profile.id)).ids, []);
      // A thousand distinct identities in one request: at most ten are attached.
      const many = Array.from({ length: 1000 }, (_, i) => ({
        type: 'h',
        properties: { email: `m${i}@x`, segment: `m${i % 3}` },
      }));
      const crowd = await raw(`many-${store}`, JSON.stringify(many));
      assert.equal((await profileOf(service, crowd.profile.id)).ids.length, 10);
      assert.ok(crowd.debugging.logs.some((l: Json) => /at most 10 per request/.test(l.message)));
    });

    test('merge cycles: a merged id sending the identities of both sides, then erasure, lose nothing', async () => {
      const a = await send(service, {
        session: { id: `cyc-a-${store}` },
        events: [{ type: 'h', properties: { email: `a-${store}@x`, n: 1 } }],
      });
      const b = await send(service, {
        session: { id: `cyc-b-${store}` },
        events: [{ type: 'h', properties: { email: `b-${store}@x`, n: 1 } }],
      });
      const aId = a.profile.id as string;
      const bId = b.profile.id as string;
      // B takes A's identity: B is merged into A.
      const merged = await send(service, {
        session: { id: `cyc-b-${store}` },
        events: [{ type: 'h', properties: { email: `a-${store}@x` } }],
      });
      assert.equal(merged.profile.id, aId);
      // B's old id, on new sessions, sends B's identity, then A's, then both in one request.
      for (const [i, emails] of [
        [`b-${store}@x`],
        [`a-${store}@x`],
        [`a-${store}@x`, `b-${store}@x`],
      ].entries()) {
        const again = await send(service, {
          session: { id: `cyc-again-${store}-${i}` },
          profile: { id: bId },
          events: emails.map((email) => ({ type: 'h', properties: { email } })),
        });
        assert.equal(again.profile.id, aId);
        assert.deepEqual(again.debugging.execution.merges, []);
      }
      const survivor = await profileOf(service, bId);
      assert.equal(survivor.id, aId);
      assert.equal(survivor.stats.visits, 5);
      assert.equal(survivor.ids.length, 2);
      // Erased through the alias: both ids are gone, and a tracker sending either starts afresh.
      expectStatus(await service.manage('DELETE', `/profile/${bId}`), 200);
      for (const id of [aId, bId]) {
        assert.equal((await service.get(`/profile/${id}`)).statusCode, 404);
        const fresh = await send(service, {
          session: { id: `after-${id}` },
          profile: { id },
          events: [{ type: 'h' }],
        });
        assert.notEqual(fresh.profile.id, id);
      }
    });
  });
}
