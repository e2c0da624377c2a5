/** Validation schemas judge only the event's own properties: names like `constructor` or `toString` are not inherited answers. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startService, type Service } from '../helpers.js';
import { answerOf, assertError, expectStatus, type Json } from './support.js';

describe('validation schemas see only own properties', () => {
  let service: Service;
  let n = 0;
  before(async () => {
    service = await startService();
    await service.createSource();
  });
  after(() => service.close());

  async function schema(eventType: string, propertiesSchema: Json): Promise<void> {
    const res = await service.manage('POST', '/event/management', {
      event_type: eventType,
      validation: { enabled: true, json_schema: { 'event@properties': propertiesSchema } },
    });
    expectStatus(res, 200);
  }

  const track = (type: string, properties: Json) =>
    service.post('/track', {
      source: { id: 'src-1' },
      session: { id: `inherited-${++n}` },
      events: [{ type, properties }],
    });

  for (const name of ['constructor', 'toString', 'hasOwnProperty', '__proto__']) {
    test(`required ["${name}"] refuses properties without it`, async () => {
      await schema(`required-${name}`, { type: 'object', required: [name] });
      const body = assertError(answerOf(await track(`required-${name}`, {})), 406, name);
      assert.match(String(body.detail), new RegExp(`'${name}' is a required property`));
    });
  }

  for (const name of ['toString', 'valueOf', 'constructor']) {
    test(`an optional "${name}" property that is absent passes`, async () => {
      await schema(`optional-${name}`, { type: 'object', properties: { [name]: { type: 'string' } } });
      expectStatus(await track(`optional-${name}`, {}), 200, name);
      expectStatus(await service.post(`/collect/optional-${name}/src-1`, {}), 200, `/collect ${name}`);
    });
  }
});
