/** A JSON text is UTF-8 (RFC 8259): a body with invalid bytes is unparsable (400) and stores nothing; distinct ids never collide. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startService, type Service } from '../helpers.js';
import { answerOf, assertError, countEvents } from './support.js';

function bodyWithSessionByte(byte: number): Buffer {
  return Buffer.concat([
    Buffer.from('{"source":{"id":"src-1"},"session":{"id":"abc'),
    Buffer.from([byte]),
    Buffer.from('"},"events":[{"type":"a"}]}'),
  ]);
}

describe('invalid UTF-8 inside a JSON string', () => {
  let service: Service;
  before(async () => {
    service = await startService();
    await service.createSource();
  });
  after(() => service.close());

  for (const url of ['/track', '/track?profile_less=true']) {
    test(`${url}: a session id with an invalid byte is a 400 and nothing is stored`, async () => {
      const res = await service.app.inject({ method: 'POST', url, payload: bodyWithSessionByte(0xff) });
      assertError(answerOf(res), 400, url);
      assert.equal(await countEvents(service), 0);
    });
  }

  test('/collect: a property value with an invalid byte is a 400', async () => {
    const body = Buffer.concat([Buffer.from('{"code":"x'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
    const res = await service.app.inject({ method: 'POST', url: '/collect/a/src-1', payload: body });
    assertError(answerOf(res), 400, '/collect');
    assert.equal(await countEvents(service), 0);
  });

  test('two session ids differing only by an invalid byte never share a session', async () => {
    const a = await service.app.inject({ method: 'POST', url: '/track', payload: bodyWithSessionByte(0xff) });
    const b = await service.app.inject({ method: 'POST', url: '/track', payload: bodyWithSessionByte(0xfe) });
    if (a.statusCode === 200 && b.statusCode === 200)
      assert.notEqual(a.json().profile.id, b.json().profile.id);
    else {
      assertError(answerOf(a), 400, 'first');
      assertError(answerOf(b), 400, 'second');
    }
  });
});
