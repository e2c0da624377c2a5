/**
 * The quarantine cannot be flooded (docs/security.md): what one source can have kept is limited in
 * rate, and what is kept is limited in bytes, the oldest going first; both are counted.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { allEvents, startService, type Json, type Service } from '../helpers.js';
import { expectStatus } from './support.js';

const strict = {
  event_type: 'purchase',
  validation: { json_schema: { 'event@properties': { type: 'object', required: ['price'] } } },
};

/** An invalid request of about `kb` KB. */
function invalid(n: number, kb: number): Json {
  return {
    source: { id: 'src-1' },
    session: { id: `flood-${n}` },
    events: [{ type: 'purchase', properties: { n, pad: 'x'.repeat(kb * 1024) } }],
  };
}

async function rejectedPages(service: Service): Promise<Json[]> {
  const records: Json[] = [];
  let cursor: string | null = null;
  do {
    const page = expectStatus(
      await service.get(`/event/rejected?limit=1000${cursor ? `&cursor=${cursor}` : ''}`),
      200,
    );
    records.push(...(page.result as Json[]));
    cursor = page.next as string | null;
  } while (cursor);
  return records;
}

function dropped(metrics: string, reason: string): number {
  const line = metrics
    .split('\n')
    .find((l) => l.startsWith(`collector_rejected_dropped_total{reason="${reason}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

test('300 invalid 100 KB requests: every one is refused, the quarantine keeps within its byte budget', async (t) => {
  const budget = 2 * 1024 * 1024;
  const service = await startService({ rejectedMaxBytes: budget, rejectedRateLimit: 0 });
  t.after(() => service.close());
  await service.createSource();
  expectStatus(await service.manage('POST', '/event/management', strict), 200);

  for (let n = 0; n < 300; n++)
    expectStatus(await service.post('/track', invalid(n, 100)), 406, `request ${n}`);
  const kept = await rejectedPages(service);
  const bytes = kept.reduce((sum, r) => sum + JSON.stringify(r).length, 0);
  t.diagnostic(`kept ${kept.length} of 300 records, ${bytes} bytes, budget ${budget}`);
  // The budget is checked after every eighth of it is written: it is overshot by that at most.
  assert.ok(bytes <= budget * 1.125 + 110 * 1024, `the quarantine holds ${bytes} bytes`);
  assert.ok(kept.length >= 10, 'the newest are kept');
  const numbers = kept.map((r) => (r.request.body.events[0].properties as Json).n as number);
  assert.equal(numbers[0], 299, 'the newest is kept');
  assert.deepEqual(
    numbers,
    Array.from({ length: kept.length }, (_, i) => 299 - i),
    'the oldest went first',
  );
  const metrics = (await service.get('/metrics')).body;
  assert.equal(dropped(metrics, 'retention'), 300 - kept.length);
  assert.equal((await allEvents(service)).length, 0, 'nothing of a refused request is stored');
});

test('rejected requests of one source are kept at a limited rate; the others are still refused', async (t) => {
  const service = await startService({ rejectedRateLimit: 5 });
  t.after(() => service.close());
  await service.createSource();
  expectStatus(await service.manage('POST', '/event/management', strict), 200);
  const answers = await Promise.all(
    Array.from({ length: 40 }, (_, n) => service.post('/track', invalid(n, 1))),
  );
  for (const res of answers) assert.equal(res.statusCode, 406);
  const kept = await rejectedPages(service);
  // Fixed one-second windows: a burst may straddle two of them.
  assert.ok(kept.length >= 5 && kept.length <= 10, `kept ${kept.length}`);
  const metrics = (await service.get('/metrics')).body;
  assert.equal(dropped(metrics, 'rate_limit'), 40 - kept.length);
});
