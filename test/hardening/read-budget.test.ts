/** Read pages have a byte budget as well as a count (docs/api.md#paging). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PAGE_MAX_BYTES } from '../../src/http/paging.js';
import { expectStatus, startService, type Json } from '../helpers.js';

test('a page of large events stops at the byte budget and says so through next', async (t) => {
  const service = await startService();
  t.after(() => service.close());
  await service.createSource();
  const pad = 'x'.repeat(200_000);
  for (let r = 0; r < 10; r++) {
    const events = Array.from({ length: 4 }, (_, i) => ({ type: 'big', properties: { n: r * 4 + i, pad } }));
    expectStatus(
      await service.post('/track', { source: { id: 'src-1' }, session: { id: `s${r}` }, events }),
      200,
    );
  }
  const seen: number[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res = await service.get(`/events?limit=1000${cursor ? `&cursor=${cursor}` : ''}`);
    const page = expectStatus(res, 200);
    pages++;
    assert.ok(res.body.length <= PAGE_MAX_BYTES + 300_000, `a page of ${res.body.length} bytes`);
    seen.push(...(page.result as Json[]).map((e) => e.properties.n as number));
    cursor = page.next as string | null;
  } while (cursor);
  assert.ok(pages >= 2, `40 events of 200 KB take more than one page (${pages})`);
  assert.deepEqual(
    [...seen].sort((a, b) => a - b),
    Array.from({ length: 40 }, (_, i) => i),
    'each event once',
  );
});
