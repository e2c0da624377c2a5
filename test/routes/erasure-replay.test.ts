/**
 * Erasure and the quarantine (docs/api.md #erasing-a-profile, #replay), on both stores: a refused
 * request keeps the profile it was resolved to, erasing the profile erases it, and a replay never
 * stores an erased profile's data again, even when the erasure and the replay run at once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { RejectedRecord } from '../../src/model/records.js';
import { PostgresStore } from '../../src/storage/postgres/store.js';
import { SqliteStore } from '../../src/storage/sqlite/store.js';
import type { Store } from '../../src/storage/store.js';
import { payload, startService, tempDir, type Service } from '../helpers.js';
import { testSchema, usePostgres } from '../support/postgres.js';
import { STORES } from './profiles-support.js';
import { allEvents, expectStatus, type Json } from './support.js';

usePostgres();

/** Each service's store, to put a quarantined record back as no endpoint does. */
const stores = new Map<string, Store>();

const strict = (required: string[]) => ({
  event_type: 'strict',
  validation: { json_schema: { 'event@properties': { type: 'object', required } } },
});

for (const store of STORES) {
  describe(`erasure and replays (${store})`, () => {
    let service: Service;
    before(async () => {
      const dataDir = tempDir();
      const opened =
        store === 'sqlite'
          ? new SqliteStore({ dataDir, sync: 'normal', writeQueueLimit: 10_000 })
          : new PostgresStore({ url: await testSchema(), writeQueueLimit: 10_000 });
      stores.set(store, opened);
      // Every refusal is kept: none is over the quarantine's rate.
      service = await startService({ dataDir, rejectedRateLimit: 0 }, { store: opened });
      await service.createSource();
    });
    after(() => service.close());

    const refuse = async (body: Json): Promise<string> => {
      expectStatus(
        await service.post(
          '/track',
          payload({ ...body, events: [{ type: 'strict', properties: body.properties }] }),
        ),
        406,
      );
      const listed = expectStatus(await service.get('/event/rejected?event_type=strict&limit=1'), 200);
      assert.deepEqual(listed.result[0].request.body.session, body.session, 'the newest record is this one');
      return listed.result[0].id as string;
    };

    test('a refused request keeps the stored profile it was resolved to; erasing it erases the request', async () => {
      expectStatus(await service.manage('POST', '/event/management', strict(['x'])), 200);
      const first = expectStatus(
        await service.post('/track', payload({ session: { id: `k-${store}` } })),
        200,
      );
      const profileId = first.profile.id as string;
      const onSession = await refuse({ session: { id: `k-${store}` }, properties: {} });
      const byId = await refuse({
        session: { id: `other-${store}` },
        profile: { id: profileId },
        properties: {},
      });
      const stranger = await refuse({ session: { id: `s-${store}` }, properties: {} });
      const record = (id: string) => service.get(`/event/rejected/${id}`);
      assert.equal(expectStatus(await record(onSession), 200).profile_id, profileId);
      assert.equal(expectStatus(await record(byId), 200).profile_id, profileId);
      assert.equal(expectStatus(await record(stranger), 200).profile_id, null, 'a new profile is not kept');

      const erased = expectStatus(await service.manage('DELETE', `/profile/${profileId}`), 200);
      assert.equal(erased.deleted.rejected, 2);
      for (const id of [onSession, byId]) {
        assert.equal((await record(id)).statusCode, 404);
        assert.equal((await service.manage('POST', `/event/rejected/${id}/replay`)).statusCode, 404);
      }
      assert.equal((await record(stranger)).statusCode, 200);
    });

    test('a replay and an erasure at the same moment never leave the erased profile data behind', async (t) => {
      expectStatus(await service.manage('POST', '/event/management', strict(['x'])), 200);
      const rounds: { profileId: string; rejected: string; marker: string }[] = [];
      for (let i = 0; i < 12; i++) {
        const session = `race-${store}-${i}`;
        const profileId = expectStatus(
          await service.post('/track', payload({ session: { id: session } })),
          200,
        ).profile.id;
        const marker = `m-${store}-${i}`;
        rounds.push({
          profileId,
          marker,
          rejected: await refuse({ session: { id: session }, properties: { marker } }),
        });
      }
      // The schema is fixed: each replay would now be accepted.
      expectStatus(await service.manage('POST', '/event/management', strict([])), 200);
      const outcomes = await Promise.all(
        rounds.map(async ({ profileId, rejected }, i) => {
          const replay = () => service.manage('POST', `/event/rejected/${rejected}/replay`);
          const erase = () => service.manage('DELETE', `/profile/${profileId}`);
          // Started in either order: [replay, erase] for odd rounds, [erase, replay] for even ones.
          const [r, e] =
            i % 2
              ? await Promise.all([replay(), erase()])
              : (await Promise.all([erase(), replay()])).reverse();
          return { replay: r!.statusCode, erase: e!.statusCode };
        }),
      );
      const seen = outcomes.map((o) => o.replay);
      t.diagnostic(
        `replays answered ${[200, 404, 410].map((code) => `${code}: ${seen.filter((c) => c === code).length}`).join(', ')}`,
      );
      for (const outcome of outcomes) {
        assert.ok([200, 404, 410].includes(outcome.replay), JSON.stringify(outcome));
        assert.equal(outcome.erase, 200);
      }
      const stored = (await allEvents(service, { type: 'strict' })).filter((e) =>
        String(e.properties.marker).startsWith(`m-${store}-`),
      );
      assert.deepEqual(stored, [], 'no refused event of an erased profile is stored');
      for (const { rejected } of rounds)
        assert.equal((await service.get(`/event/rejected/${rejected}`)).statusCode, 404);
    });

    test('a replay whose profile is gone and that would make a new one is dropped with 410', async () => {
      // The quarantined request names a profile erased while the record itself was kept: as happens
      // when the erasure runs between the replay's read of the record and its commit.
      expectStatus(await service.manage('POST', '/event/management', strict(['x'])), 200);
      const session = `gone-${store}`;
      const profileId = expectStatus(await service.post('/track', payload({ session: { id: session } })), 200)
        .profile.id;
      const rejected = await refuse({
        session: { id: `elsewhere-${store}` },
        profile: { id: profileId },
        properties: { marker: 'gone' },
      });
      // Move the record out of the erasure's reach: the profile is erased, then the record is put back.
      const record = expectStatus(await service.get(`/event/rejected/${rejected}`), 200);
      assert.equal(record.profile_id, profileId);
      expectStatus(await service.manage('DELETE', `/profile/${profileId}`), 200);
      expectStatus(await service.manage('POST', '/event/management', strict([])), 200);
      await stores.get(store)!.putRejected(record as RejectedRecord);
      const res = await service.manage('POST', `/event/rejected/${rejected}/replay`);
      assert.equal(res.statusCode, 410, res.body);
      assert.equal(res.json().detail, 'The profile of this request was erased: it is not replayed');
      assert.equal(
        (await service.get(`/event/rejected/${rejected}`)).statusCode,
        404,
        'the record is dropped',
      );
      assert.deepEqual(
        (await allEvents(service, { type: 'strict' })).filter((e) => e.properties.marker === 'gone'),
        [],
      );
    });
  });
}
