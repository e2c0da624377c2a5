/** Path parameters as long as the reference allows reach their routes; malformed URLs answer with a detail. */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { payload, startService, type Service } from '../helpers.js';
import { allEvents, expectError, expectStatus, read } from './support.js';

describe('path parameters as long as the reference allows', () => {
  let service: Service;
  beforeEach(async () => {
    service = await startService();
    await service.createSource();
  });
  afterEach(() => service.close());

  test('/collect accepts an event type of 255 characters', async () => {
    const long = 't'.repeat(255);
    const body = expectStatus(await service.post(`/collect/${long}/src-1`, {}), 200);
    assert.equal((await read(service, `/event/${body.event.id}`)).type, long);
  });

  test('/collect refuses an event type over 255 characters with a 422 and a detail', async () => {
    expectError(await service.post(`/collect/${'t'.repeat(256)}/src-1`, {}), 422);
    assert.equal((await allEvents(service)).length, 0);
  });

  test('a source with a 128-character id can be used by /collect, read and deleted', async () => {
    const id = 's'.repeat(128);
    await service.createSource({ id });
    expectStatus(await service.post(`/collect/a/${id}`, {}), 200);
    assert.equal((await read(service, `/event-source/${id}`)).id, id);
    expectStatus(await service.manage('DELETE', `/event-source/${id}`), 200);
  });

  test('a session with a 128-character id stored by /track can be read', async () => {
    const id = 's'.repeat(128);
    const res = expectStatus(await service.post('/track', payload({ session: { id } })), 200);
    const session = await read(service, `/session/${id}`);
    assert.deepEqual(session.profile, { id: res.profile.id });
  });

  test('an over-long or malformed path parameter is an error with a detail, never a bare router error', async () => {
    for (const url of [`/event/${'e'.repeat(2000)}`, `/profile/${'p'.repeat(300)}`, '/event/%E0%A4%A']) {
      const res = await service.get(url);
      assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${url}: ${res.statusCode}`);
      expectError(res, res.statusCode);
    }
  });
});
