/**
 * A real collector process whose database goes away (docs/api.md #settings, #errors): /health answers 503 and
 * /track 503 with Retry-After, in bounded time, whether the server is stopped or silent; the
 * service recovers by itself, and forgets its cached schemas and sources since it may have missed
 * change notifications meanwhile.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testSchema, usePostgres } from '../support/postgres.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { ok, poll, startCollector, track, type Answer, type Collector } from './support.js';

usePostgres();

/** Longest a request may take while the database is unreachable (connect timeout 5 s, plus a loaded machine). */
const BOUND_MS = 30_000;

async function timed(what: string, request: () => Promise<Answer>): Promise<Answer> {
  const started = Date.now();
  const answer = await request();
  const elapsed = Date.now() - started;
  assert.ok(elapsed < BOUND_MS, `${what} took ${elapsed} ms`);
  return answer;
}

/** 503 with a Retry-After and a JSON detail, in bounded time. */
async function unavailable(what: string, request: () => Promise<Answer>): Promise<void> {
  const answer = await timed(what, request);
  assert.equal(answer.status, 503, `${what}: ${answer.status} ${answer.text}`);
  assert.match(answer.headers.get('retry-after') ?? '', /^\d+$/, `${what}: Retry-After`);
  assert.equal(typeof answer.body.detail, 'string', what);
}

const health = (collector: Collector) => async (): Promise<Answer> => {
  const res = await fetch(`${collector.base}/health`);
  return { status: res.status, headers: res.headers, body: (await res.json()) as Answer['body'], text: '' };
};

let n = 0;
const purchase = () => track(`outage-${n++}`, { events: [{ type: 'purchase', properties: {} }] });

test('the database stopped, then silent: 503s in bounded time, recovery by itself, caches forgotten after a reconnect', async (t) => {
  const direct = await testSchema();
  const { proxy, url } = await TcpProxy.in(direct);
  t.after(() => proxy.close());
  const a = await startCollector(t, direct);
  // B reaches the database through the proxy and would keep sources and schemas for an hour.
  const b = await startCollector(t, url, { EVENT_VALIDATOR_TTL: '3600', TRACK_SOURCE_TTL: '3600' });
  ok(await a.manage('POST', '/event-source', { id: 'web', name: 'Web' }));
  ok(await b.post('/track', purchase())); // B caches the source and "no schema for purchase"

  await t.test('stopped: /health, /track and reads answer 503 with Retry-After', async () => {
    await proxy.down();
    await unavailable('/health', health(b));
    await unavailable('/track', () => b.post('/track', purchase()));
    await unavailable('/track of a known session', () => b.post('/track', track('outage-0')));
    await unavailable('GET /events', () => b.manage('GET', '/events'));
    // A keeps working on its own connection, and changes a schema: B cannot hear of it now.
    ok(
      await a.manage('POST', '/event/management', {
        event_type: 'purchase',
        validation: {
          enabled: true,
          json_schema: { 'event@properties': { type: 'object', required: ['price'] } },
        },
      }),
    );
    ok(await a.post('/track', track('a-during-outage')));
  });

  await t.test(
    'back: /health 200 and /track work again; the schema changed meanwhile applies at once',
    async () => {
      await proxy.up();
      await poll(health(b), (answer) => answer.status === 200, '/health back to 200', BOUND_MS);
      // The LISTEN connection came back too and B forgot its cache: the hour-long TTL does not apply.
      const applied = await poll(
        async () => (await b.post('/track', purchase())).status,
        (status) => status === 406,
        'the schema saved during the outage on B',
        15_000,
      );
      t.diagnostic(
        `schema saved during the outage applied on B ${applied.elapsedMs} ms after /health was 200`,
      );
      const stored = ok(
        await b.post(
          '/track',
          track('after-outage', { events: [{ type: 'purchase', properties: { price: 3 } }] }),
        ),
      );
      assert.equal(ok(await a.manage('GET', `/profile/${stored.profile.id}`)).stats.visits, 1);
    },
  );

  await t.test(
    'silent (connections accepted, never answered): 503s in bounded time, then recovery',
    async () => {
      await proxy.blackhole();
      await unavailable('/health', health(b));
      await unavailable('/track', () => b.post('/track', purchase()));
      await proxy.up();
      await poll(health(b), (answer) => answer.status === 200, '/health back to 200', BOUND_MS);
      ok(await b.post('/track', track('after-silence', { events: [{ type: 'page-view' }] })));
    },
  );

  assert.equal(await b.stop(), 0, b.output());
  assert.equal(await a.stop(), 0, a.output());
});
