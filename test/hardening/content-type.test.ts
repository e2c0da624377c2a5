/** Bodies are read as JSON whatever their Content-Type (docs/api.md #conventions), even an empty or malformed one. */
import { after, before, describe, test } from 'node:test';
import { startService, type Service } from '../helpers.js';
import { expectStatus, validPayload } from './support.js';

describe('bodies with a malformed Content-Type are still read as JSON', () => {
  let service: Service;
  before(async () => {
    service = await startService();
    await service.createSource();
  });
  after(() => service.close());

  for (const contentType of ['', ' ', 'foo', ';', 'json']) {
    test(`content-type ${JSON.stringify(contentType)}`, async () => {
      const res = await service.app.inject({
        method: 'POST',
        url: '/track',
        headers: { 'content-type': contentType },
        payload: JSON.stringify(validPayload(`ct-${contentType.length}-${contentType.trim()}`)),
      });
      expectStatus(res, 200, JSON.stringify(contentType));
    });
  }
});
