/** Requests refused by the HTTP parser itself (headers over 16 kB) still answer JSON with a `detail` (docs/api.md #errors). */
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { AUTH, startService, type Service } from '../helpers.js';
import { assertError, sendRaw } from './support.js';

describe('headers over the server limit', () => {
  let service: Service;
  let port: number;
  before(async () => {
    service = await startService();
    await service.app.listen({ port: 0, host: '127.0.0.1' });
    port = (service.app.server.address() as AddressInfo).port;
  });
  after(() => service.close());

  test('a 20 kB query string answers a 4xx with a detail', async () => {
    assertError(
      await sendRaw(port, { method: 'GET', path: `/events?session_id=${'s'.repeat(20_000)}`, headers: AUTH }),
      [414, 431],
      'long URL',
    );
  });

  test('a 20 kB header answers a 4xx with a detail', async () => {
    assertError(
      await sendRaw(port, { method: 'GET', path: '/health', headers: { 'x-big': 'b'.repeat(20_000) } }),
      431,
      'big header',
    );
  });
});
