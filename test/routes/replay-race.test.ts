/**
 * Concurrent replays of one quarantined request (docs/api.md#replay), on both stores: the record is
 * claimed by the commit that stores its events, so however many replays run at once its events are
 * stored once, one replay answers 200 and the others 404, and the record is gone. A replay still
 * refused leaves the record in place with its reasons updated.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { payload, type Service } from '../helpers.js';
import { usePostgres } from '../support/postgres.js';
import { STORES, startOn } from './profiles-support.js';
import { allEvents, expectError, expectStatus, type Json } from './support.js';

usePostgres();

const REPLAYS = 12;

const strict = (required: string[]) => ({
  event_type: 'strict',
  validation: { json_schema: { 'event@properties': { type: 'object', required } } },
});

for (const store of STORES) {
  describe(`concurrent replays (${store})`, () => {
    let service: Service;
    before(async () => {
      // Every refusal is kept: none is over the quarantine's rate.
      service = await startOn(store, { rejectedRateLimit: 0 });
    });
    after(() => service.close());

    /** Sends a request the schema refuses; returns the id of its quarantined record. */
    const refuse = async (res: Promise<{ statusCode: number; body: string }>, marker: string) => {
      assert.equal((await res).statusCode, 406);
      const listed = expectStatus(await service.get('/event/rejected?limit=1000'), 200);
      const record = (listed.result as Json[]).find((r) => JSON.stringify(r.request.body).includes(marker));
      assert.ok(record, `the refused request ${marker} is kept`);
      return record.id as string;
    };

    const replayAll = async (id: string) => {
      const answers = await Promise.all(
        Array.from({ length: REPLAYS }, () => service.manage('POST', `/event/rejected/${id}/replay`)),
      );
      return answers;
    };

    const stored = async (marker: string) =>
      (await allEvents(service, { type: 'strict' })).filter((e) => e.properties.marker === marker);

    test(`${REPLAYS} replays at once of a /track request without client ids store its events once`, async () => {
      expectStatus(await service.manage('POST', '/event/management', strict(['x'])), 200);
      const marker = `track-${store}`;
      const body = payload({
        events: [
          { type: 'strict', properties: { marker } },
          { type: 'strict', properties: { marker, second: true } },
        ],
      });
      const id = await refuse(service.post('/track', body), marker);
      expectStatus(await service.manage('POST', '/event/management', strict([])), 200);

      const answers = await replayAll(id);
      const codes = answers.map((a) => a.statusCode).sort();
      assert.deepEqual(codes, [200, ...Array<number>(REPLAYS - 1).fill(404)], JSON.stringify(codes));
      for (const answer of answers.filter((a) => a.statusCode === 404)) {
        assert.equal(expectError(answer, 404), `Rejected request \`${id}\` not found`);
      }
      assert.equal((await stored(marker)).length, 2, 'the two events are stored once');
      assert.equal((await service.get(`/event/rejected/${id}`)).statusCode, 404, 'the record is gone');
    });

    test(`${REPLAYS} replays at once of a /collect request store its event once`, async () => {
      expectStatus(await service.manage('POST', '/event/management', strict(['x'])), 200);
      const marker = `collect-${store}`;
      const id = await refuse(service.post('/collect/strict/src-1', { marker }), marker);
      expectStatus(await service.manage('POST', '/event/management', strict([])), 200);

      const codes = (await replayAll(id)).map((a) => a.statusCode).sort();
      assert.deepEqual(codes, [200, ...Array<number>(REPLAYS - 1).fill(404)], JSON.stringify(codes));
      assert.equal((await stored(marker)).length, 1);
      assert.equal((await service.get(`/event/rejected/${id}`)).statusCode, 404);
    });

    test('a replay refused again keeps the record with its reasons updated, then one of many wins', async () => {
      expectStatus(await service.manage('POST', '/event/management', strict(['x'])), 200);
      const marker = `again-${store}`;
      const id = await refuse(
        service.post('/track', payload({ events: [{ type: 'strict', properties: { marker } }] })),
        marker,
      );
      expectStatus(await service.manage('POST', '/event/management', strict(['y'])), 200);
      const answers = await replayAll(id);
      for (const answer of answers) assert.equal(expectError(answer, 406), answers[0]!.json().detail);
      const kept = expectStatus(await service.get(`/event/rejected/${id}`), 200);
      assert.match(kept.detail as string, /'y'/, 'the reasons are those of the replay');
      assert.deepEqual(kept.errors, answers[0]!.json().errors);
      assert.equal((await stored(marker)).length, 0);

      expectStatus(await service.manage('POST', '/event/management', strict([])), 200);
      const codes = (await replayAll(id)).map((a) => a.statusCode).sort();
      assert.deepEqual(codes, [200, ...Array<number>(REPLAYS - 1).fill(404)], JSON.stringify(codes));
      assert.equal((await stored(marker)).length, 1);
    });
  });
}
