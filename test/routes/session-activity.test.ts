/** A session's metadata.time.update is the time of its latest request, on both stores. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectStatus, payload, startService, type Service } from '../helpers.js';
import { testSchema, usePostgres } from '../support/postgres.js';

usePostgres();

const STORES: [string, () => Promise<Service>][] = [
  ['sqlite', () => startService()],
  ['postgres', async () => startService({ databaseUrl: await testSchema() })],
];

for (const [name, start] of STORES) {
  describe(`${name}: last activity of a session`, () => {
    test('requests that change nothing of the session still move metadata.time.update', async (t) => {
      const service = await start();
      t.after(() => service.close());
      await service.createSource();
      const sid = `activity-${name}`;
      const context = { page: { url: 'https://shop.example/' } };
      const send = async (type: string, extra: Record<string, unknown> = {}) => {
        const body = expectStatus(
          await service.post(
            '/track',
            payload({ session: { id: sid }, context, events: [{ type }], ...extra }),
          ),
          200,
        );
        const [event] = expectStatus(await service.get(`/events?session_id=${sid}&type=${type}`), 200).result;
        return { body, insert: event?.metadata.time.insert as string | undefined };
      };
      const session = async () => expectStatus(await service.get(`/session/${sid}`), 200);

      const first = await send('first');
      const created = await session();
      assert.equal(created.metadata.time.update, created.metadata.time.insert);
      assert.equal(created.metadata.time.insert, first.insert);

      // The same context again: the session record is not rewritten, yet its activity moves.
      await new Promise((resolve) => setTimeout(resolve, 5));
      const second = await send('second');
      const after = await session();
      assert.equal(after.metadata.time.update, second.insert);
      assert.equal(after.metadata.time.insert, created.metadata.time.insert);
      assert.deepEqual(after.context, created.context);
      assert.ok(second.insert! > first.insert!);

      // Events not saved: the request still counts as activity.
      await new Promise((resolve) => setTimeout(resolve, 5));
      const before = Date.now();
      expectStatus(
        await service.post(
          '/track',
          payload({ session: { id: sid }, context, events: [{ type: 'unsaved', options: { save: false } }] }),
        ),
        200,
      );
      const third = await session();
      assert.ok(Date.parse(third.metadata.time.update) >= before, JSON.stringify(third.metadata));

      // A change of context rewrites the record, with its own time.
      await new Promise((resolve) => setTimeout(resolve, 5));
      const changed = await send('changed', { context: { page: { url: 'https://shop.example/cart' } } });
      const fourth = await session();
      assert.equal(fourth.metadata.time.update, changed.insert);
      assert.equal(fourth.context.page.url, 'https://shop.example/cart');

      // saveSession: false leaves the session as it was.
      await new Promise((resolve) => setTimeout(resolve, 5));
      await send('not-saved', { options: { saveSession: false } });
      assert.equal((await session()).metadata.time.update, changed.insert);
    });
  });
}
