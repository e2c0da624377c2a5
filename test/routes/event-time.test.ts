/**
 * Event times (docs/api.md#event-time): `sent_at` and per-event `timestamp` give each stored event
 * `metadata.time.create` and `source`; `since`/`until` list events by it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { payload, startService, type Service } from '../helpers.js';
import { allEvents, expectFieldError, expectStatus, track, type Json } from './support.js';

const iso = (ms: number) => new Date(ms).toISOString();
const fresh = () => `session-${Math.random().toString(36).slice(2)}`;

/** Sends one request and answers its stored events in request order (by their `n`). */
async function stored(service: Service, body: Json): Promise<Json[]> {
  const sid = fresh();
  await track(service, { ...payload({ session: { id: sid } }), ...body });
  const events = await allEvents(service, { session_id: sid });
  return events.sort((a, b) => a.properties.n - b.properties.n);
}

const at = (ms: number, n: number, extra: Json = {}) => ({
  type: 't',
  timestamp: iso(ms),
  properties: { n },
  ...extra,
});

describe('event times with TRACK_CLOCK_SKEW=60 (the default)', () => {
  let service: Service;
  before(async () => {
    service = await startService();
    await service.createSource();
  });
  after(() => service.close());

  test('no timestamp: create is the insert time, source "server"', async () => {
    const [e] = await stored(service, { events: [{ type: 't', properties: { n: 0 } }] });
    assert.equal(e!.metadata.time.create, e!.metadata.time.insert);
    assert.equal(e!.metadata.time.source, 'server');
  });

  test('a timestamp without sent_at, or with a sent_at close to our clock: the device time as sent', async () => {
    const now = Date.now();
    const events = await stored(service, {
      sent_at: iso(now + 20_000), // 20 s ahead: within the skew
      events: [
        at(now - 3_600_000, 0),
        { type: 't', timestamp: '2025-06-01T12:00:00.5+02:00', properties: { n: 1 } },
        { type: 't', timestamp: '2025-06-01T10:00:00.123456789Z', properties: { n: 2 } },
      ],
    });
    assert.deepEqual(
      events.map((e) => [e.metadata.time.create, e.metadata.time.source]),
      [
        [iso(now - 3_600_000), 'device'],
        ['2025-06-01T10:00:00.500Z', 'device'],
        ['2025-06-01T10:00:00.123Z', 'device'],
      ],
    );
    const [plain] = await stored(service, { events: [at(now - 5000, 0)] });
    assert.deepEqual(plain!.metadata.time.source, 'device');
    assert.equal(plain!.metadata.time.create, iso(now - 5000));
  });

  test('a device clock an hour ahead: times corrected by the difference between sent_at and insert', async () => {
    const ahead = Date.now() + 3_600_000;
    const events = await stored(service, {
      sent_at: iso(ahead),
      events: [at(ahead - 10_000, 0), at(ahead - 86_400_000, 1)],
    });
    for (const [e, before] of [
      [events[0]!, 10_000],
      [events[1]!, 86_400_000],
    ] as const) {
      assert.equal(e.metadata.time.source, 'corrected');
      assert.equal(Date.parse(e.metadata.time.insert) - Date.parse(e.metadata.time.create), before);
    }
  });

  test('a time that lies more than the skew after the insert time is clamped to it', async () => {
    const now = Date.now();
    const events = await stored(service, {
      events: [at(now + 86_400_000, 0), at(now + 30_000, 1)],
    });
    assert.equal(events[0]!.metadata.time.source, 'clamped');
    assert.equal(events[0]!.metadata.time.create, events[0]!.metadata.time.insert);
    assert.equal(events[1]!.metadata.time.source, 'device', '30 s ahead is within the skew');
    // Corrected into the future: the device said it sent an hour ago what happened just now.
    const [late] = await stored(service, { sent_at: iso(now - 3_600_000), events: [at(now, 0)] });
    assert.equal(late!.metadata.time.source, 'clamped');
    assert.equal(late!.metadata.time.create, late!.metadata.time.insert);
  });

  test('times far in the past are stored as they are; a correction before year 1 is clamped', async () => {
    const [old] = await stored(service, {
      events: [{ type: 't', timestamp: '0001-01-01T00:00:00Z', properties: { n: 0 } }],
    });
    assert.equal(old!.metadata.time.create, '0001-01-01T00:00:00.000Z');
    assert.equal(old!.metadata.time.source, 'device');
    const [far] = await stored(service, {
      sent_at: '9999-12-31T23:59:59Z',
      events: [{ type: 't', timestamp: '0001-01-01T00:00:00Z', properties: { n: 0 } }],
    });
    assert.equal(far!.metadata.time.source, 'clamped');
  });

  test('an unparseable sent_at or timestamp is a 422 naming the field', async () => {
    const bad = [
      'yesterday',
      '2026-11-23',
      '2026-11-23T20:16:01', // no offset
      '2026-13-01T00:00:00Z',
      '2026-02-30T00:00:00Z',
      '2026-11-23T24:00:00Z',
      '2026-11-23T20:16:60Z',
      '2026-11-23T20:16:01+25:00',
      '+012026-11-23T20:16:01Z',
      '1700000000000',
      '',
      `2026-11-23T20:16:01.${'1'.repeat(1000)}Z`,
    ];
    for (const value of [...bad, 1_700_000_000_000, true, {}]) {
      expectFieldError(await service.post('/track', payload({ sent_at: value })), ['sent_at']);
      expectFieldError(
        await service.post('/track', payload({ events: [{ type: 'a' }, { type: 'b', timestamp: value }] })),
        ['events', 1, 'timestamp'],
      );
    }
    // null counts as absent.
    const [e] = await stored(service, {
      sent_at: null,
      events: [{ type: 't', timestamp: null, properties: { n: 0 } }],
    });
    assert.equal(e!.metadata.time.source, 'server');
  });

  test('GET /events: since and until select by create time (since included, until excluded)', async () => {
    const sid = fresh();
    const base = Date.parse('2024-03-01T00:00:00Z');
    await track(service, {
      ...payload({ session: { id: sid } }),
      events: [0, 1, 2, 3].map((i) => at(base + i * 60_000, i)),
    });
    const list = async (query: Record<string, string>) =>
      (await allEvents(service, { session_id: sid, ...query })).map((e) => e.properties.n).sort();
    assert.deepEqual(await list({ since: iso(base + 60_000) }), [1, 2, 3]);
    assert.deepEqual(await list({ until: iso(base + 60_000) }), [0]);
    assert.deepEqual(await list({ since: iso(base + 60_000), until: iso(base + 180_000) }), [1, 2]);
    // Offsets are read as such.
    assert.deepEqual(await list({ since: '2024-03-01T01:02:00+01:00' }), [2, 3]);
    assert.deepEqual(await list({ since: iso(base + 600_000) }), []);
    for (const name of ['since', 'until']) {
      for (const value of ['soon', '2024-03-01', '2024-03-01T00:00:00']) {
        expectFieldError(await service.get(`/events?${name}=${encodeURIComponent(value)}`), [name]);
      }
    }
  });

  test('a replayed /collect event keeps the time its request was first received', async () => {
    await service.manage('POST', '/event/management', {
      event_type: 'late',
      validation: { json_schema: { 'event@properties': { type: 'object', required: ['ok'] } } },
    });
    expectStatus(await service.post('/collect/late/src-1', { no: 1 }), 406);
    const rejected = (await service.get('/event/rejected?event_type=late')).json().result[0] as Json;
    await new Promise((resolve) => setTimeout(resolve, 20));
    await service.manage('POST', '/event/management', { event_type: 'late' });
    const replay = expectStatus(await service.manage('POST', `/event/rejected/${rejected.id}/replay`), 200);
    const event = expectStatus(await service.get(`/event/${replay.event.id}`), 200);
    assert.equal(event.metadata.time.create, rejected.time);
    assert.equal(event.metadata.time.source, 'server');
    assert.ok(event.metadata.time.insert > rejected.time, 'inserted at the replay');
  });
});

describe('TRACK_CLOCK_SKEW', () => {
  test('a larger skew keeps device times as sent; 0 corrects any difference', async (t) => {
    const tolerant = await startService({ clockSkewSec: 3600 });
    const strict = await startService({ clockSkewSec: 0 });
    t.after(async () => {
      await tolerant.close();
      await strict.close();
    });
    const now = Date.now();
    const body = { sent_at: iso(now + 600_000), events: [at(now + 590_000, 0)] };
    await tolerant.createSource();
    await strict.createSource();
    const [kept] = await stored(tolerant, body);
    assert.equal(kept!.metadata.time.source, 'device');
    assert.equal(kept!.metadata.time.create, iso(now + 590_000), '10 minutes ahead is within an hour');
    const [corrected] = await stored(strict, { sent_at: iso(now - 5000), events: [at(now - 6000, 0)] });
    assert.equal(corrected!.metadata.time.source, 'corrected');
  });
});
