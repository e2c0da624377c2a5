/** Requests refused by the HTTP parser itself (headers over 16 kB) still answer JSON with a `detail` (contract §8). */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { AUTH, startService, type Service } from '../helpers.js';
import { assertError, type Answer } from './support.js';

function get(port: number, path: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          contentType: String(res.headers['content-type'] ?? ''),
          body,
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

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
    assertError(await get(port, `/events?session_id=${'s'.repeat(20_000)}`, AUTH), [414, 431], 'long URL');
  });

  test('a 20 kB header answers a 4xx with a detail', async () => {
    assertError(await get(port, '/health', { 'x-big': 'b'.repeat(20_000) }), 431, 'big header');
  });
});
