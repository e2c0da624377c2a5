/**
 * Property-based tests of POST /track and the other body-taking endpoints (docs/api.md #conventions, #post-track, #errors),
 * with fixed seeds so that every run is the same:
 * (a) structurally valid tracker payloads always answer 200 and store each event exactly once
 *     (or not at all with options.saveEvents false / an event's options.save false);
 * (b) a valid payload with one field deleted or replaced by a value of the wrong type answers 422
 *     naming that field, and stores nothing;
 * (c) random bytes and strings as bodies never get a 5xx, and every error has a JSON `detail`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { AUTH, type Service } from '../helpers.js';
import { usePostgres } from '../support/postgres.js';
import { STORES, startOn } from '../routes/profiles-support.js';
import { answerOf, assertError, countEvents, expectStatus, type Json, type Loc } from './support.js';

/**
 * Runs of each property on each store. PostgreSQL runs a third of them: a request there costs a few
 * round trips, and the properties mostly exercise the HTTP layer and the pipeline, which are the same
 * on both stores; what differs (jsonb and the `raw` column for U+0000 and lone surrogates, the
 * statements' parameters) is reached within a hundred runs of the same seeds.
 */
const RUNS_ON = { sqlite: 300, postgres: 100 } as const;

usePostgres();

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const codePoints = (s: string) => [...s].length;
const isText = (v: unknown, min: number, max: number) =>
  typeof v === 'string' && codePoints(v) >= min && codePoints(v) <= max;
const isOptionalObject = (v: unknown) => v === undefined || v === null || isObject(v);
const isOptionalBoolean = (v: unknown) => v === undefined || typeof v === 'boolean';

/** What a value becomes once sent: JSON.stringify drops undefined and turns NaN/Infinity into null. */
function roundTrip<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

// --- Arbitraries of valid payloads ------------------------------------------------------------

const text = (min: number, max: number) => fc.string({ unit: 'binary', minLength: min, maxLength: max });
const jsonObject = fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 });
const optionalObject = fc.option(jsonObject, { nil: null });
const flag = fc.boolean();

const eventArb = fc.record(
  {
    type: text(1, 255),
    properties: optionalObject,
    context: optionalObject,
    options: fc.option(fc.record({ save: flag }, { requiredKeys: [] }), { nil: null }),
  },
  { requiredKeys: ['type'] },
);

/** Everything of a payload but the session id, which each run makes unique. */
const payloadArb = fc.record(
  {
    sessionSuffix: text(1, 100),
    profile: fc.option(fc.record({ id: fc.option(text(1, 128), { nil: null }) }, { requiredKeys: [] }), {
      nil: null,
    }),
    context: optionalObject,
    properties: optionalObject,
    options: fc.option(
      fc.record({ debugger: flag, profile: flag, saveSession: flag, saveEvents: flag }, { requiredKeys: [] }),
      { nil: null },
    ),
    events: fc.array(eventArb, { minLength: 1, maxLength: 5 }),
    unknown: fc.dictionary(
      fc.string({ maxLength: 8 }).map((k) => `x-${k}`),
      fc.jsonValue({ maxDepth: 2 }),
      { maxKeys: 3 },
    ),
    profileLess: fc.boolean(),
  },
  { requiredKeys: ['sessionSuffix', 'events', 'unknown', 'profileLess'] },
);
type Generated = typeof payloadArb extends fc.Arbitrary<infer T> ? T : never;

let runCounter = 0;

/** The tracker payload of a generated value, with a session id no other run uses. */
function build(g: Generated): Json {
  const sessionId = [...`f${++runCounter}-${g.sessionSuffix}`].slice(0, 128).join('');
  const body: Json = { ...g.unknown, source: { id: 'src-1' }, session: { id: sessionId }, events: g.events };
  for (const key of ['profile', 'context', 'properties', 'options'] as const)
    if (key in g) body[key] = g[key];
  return roundTrip(body);
}

/** The events of a payload the reference says are stored (docs/api.md#track-request, #track-options). */
function expectedStored(body: Json): Json[] {
  if (body.options?.saveEvents === false) return [];
  return (body.events as Json[]).filter((e) => e.options?.save !== false);
}

/** JSON text with every object's keys sorted: PostgreSQL keeps documents as jsonb, which orders keys. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/** An order-free fingerprint of events: their types and properties. */
function fingerprint(events: Json[]): string[] {
  return events.map((e) => canonical([e.type, e.properties ?? {}])).sort();
}

for (const store of STORES) {
  const RUNS = RUNS_ON[store];
  describe(`fuzz: valid tracker payloads (${store})`, () => {
    let service: Service;
    before(async () => {
      service = await startOn(store);
    });
    after(() => service.close());

    test(`always 200, and every event stored exactly once unless saving is off (${RUNS} runs)`, async (t) => {
      let stored = 0;
      let sent = 0;
      let debugged = 0;
      await fc.assert(
        fc.asyncProperty(payloadArb, async (g) => {
          const body = build(g);
          const url = g.profileLess ? '/track?profile_less=true' : '/track';
          const res = await service.post(url, JSON.stringify(body));
          const answer = expectStatus(res, 200, `${url} ${JSON.stringify(body).slice(0, 300)}`);
          const wanted = expectedStored(body);
          const sessionId = body.session.id as string;
          assert.equal(answer.session.id, sessionId);

          const page = expectStatus(
            await service.get(`/events?limit=1000&session_id=${encodeURIComponent(sessionId)}`),
            200,
          );
          const found = page.result as Json[];
          assert.deepEqual(fingerprint(found), fingerprint(wanted));
          assert.equal(new Set(found.map((e) => e.id)).size, found.length, 'an event is stored twice');
          for (const event of found) {
            assert.equal(event.metadata.profile_less, g.profileLess);
            assert.deepEqual(event.profile, g.profileLess ? null : { id: answer.profile.id });
          }

          if (body.options?.debugger === true) {
            const ids = answer.debugging.events.ids as string[];
            debugged++;
            assert.equal(answer.debugging.events.saved, wanted.length);
            assert.deepEqual([...ids].sort(), found.map((e) => e.id as string).sort());
            for (const id of ids) {
              const one = expectStatus(await service.get(`/event/${encodeURIComponent(id)}`), 200);
              assert.deepEqual(
                one,
                found.find((e) => e.id === id),
              );
            }
          }
          stored += wanted.length;
          sent += (body.events as Json[]).length;
        }),
        { seed: 20261122, numRuns: RUNS },
      );
      // Nothing else was stored: the total is the sum of what each request should have stored.
      let total = 0;
      let cursor: string | null = null;
      do {
        const page: Json = expectStatus(
          await service.get(`/events?limit=1000${cursor ? `&cursor=${cursor}` : ''}`),
          200,
        );
        total += (page.result as Json[]).length;
        cursor = page.next as string | null;
      } while (cursor);
      assert.equal(total, stored);
      t.diagnostic(
        `${RUNS} requests, ${sent} events sent, ${stored} stored, ${debugged} checked by debugging ids`,
      );
    });
  });
}

// --- Mutations into invalid payloads ----------------------------------------------------------

/** A field of the payload with the rule its values must follow (undefined: the field is absent). */
interface Field {
  path: (events: number) => Loc;
  valid: (value: unknown) => boolean;
  required: boolean;
}

const validEvent = (v: unknown) =>
  isObject(v) &&
  isText(v.type, 1, 255) &&
  isOptionalObject(v.properties) &&
  isOptionalObject(v.context) &&
  (v.options === undefined ||
    v.options === null ||
    (isObject(v.options) && isOptionalBoolean(v.options.save)));

const FIELDS: Field[] = [
  { path: () => ['source'], valid: (v) => isObject(v) && isText(v.id, 1, 128), required: true },
  { path: () => ['source', 'id'], valid: (v) => isText(v, 1, 128), required: true },
  { path: () => ['session'], valid: (v) => isObject(v) && isText(v.id, 1, 128), required: true },
  { path: () => ['session', 'id'], valid: (v) => isText(v, 1, 128), required: true },
  {
    path: () => ['profile'],
    valid: (v) =>
      v === undefined ||
      v === null ||
      (isObject(v) && (v.id === undefined || v.id === null || isText(v.id, 0, 128))),
    required: false,
  },
  {
    path: () => ['profile', 'id'],
    valid: (v) => v === undefined || v === null || isText(v, 0, 128),
    required: false,
  },
  { path: () => ['context'], valid: isOptionalObject, required: false },
  { path: () => ['properties'], valid: isOptionalObject, required: false },
  {
    path: () => ['options'],
    valid: (v) =>
      v === undefined ||
      v === null ||
      (isObject(v) &&
        ['debugger', 'profile', 'saveSession', 'saveEvents'].every((k) => isOptionalBoolean(v[k]))),
    required: false,
  },
  ...['debugger', 'profile', 'saveSession', 'saveEvents'].map((k) => ({
    path: () => ['options', k],
    valid: isOptionalBoolean,
    required: false,
  })),
  {
    path: () => ['events'],
    valid: (v) => Array.isArray(v) && v.length >= 1 && v.length <= 1000 && v.every(validEvent),
    required: true,
  },
  { path: (i) => ['events', i], valid: validEvent, required: true },
  { path: (i) => ['events', i, 'type'], valid: (v) => isText(v, 1, 255), required: true },
  { path: (i) => ['events', i, 'properties'], valid: isOptionalObject, required: false },
  { path: (i) => ['events', i, 'context'], valid: isOptionalObject, required: false },
  {
    path: (i) => ['events', i, 'options'],
    valid: (v) => v === undefined || v === null || (isObject(v) && isOptionalBoolean(v.save)),
    required: false,
  },
  { path: (i) => ['events', i, 'options', 'save'], valid: isOptionalBoolean, required: false },
];

/** Sets or deletes (`value` undefined) the field at `path`, creating parent objects as needed. */
function mutate(body: Json, path: Loc, value: unknown): Json {
  const copy = roundTrip(body);
  let target: Json = copy;
  for (const key of path.slice(0, -1)) {
    if (!isObject(target[key as string]) && !Array.isArray(target[key as string])) target[key as string] = {};
    target = target[key as string];
  }
  const last = path[path.length - 1] as string;
  if (value === undefined) delete target[last];
  else target[last] = value;
  return copy;
}

const mutationArb = fc.record({
  payload: payloadArb,
  field: fc.constantFrom(...FIELDS),
  eventIndex: fc.nat(),
  replacement: fc.option(fc.anything(), { nil: undefined, freq: 4 }),
});

for (const store of STORES) {
  const RUNS = RUNS_ON[store];
  describe(`fuzz: invalid tracker payloads (${store})`, () => {
    let service: Service;
    before(async () => {
      service = await startOn(store);
    });
    after(() => service.close());

    test(`one field deleted or of the wrong type: 422 naming it, never 5xx, nothing stored (${RUNS} runs)`, async (t) => {
      let tried = 0;
      await fc.assert(
        fc.asyncProperty(mutationArb, async ({ payload, field, eventIndex, replacement }) => {
          const valid = build(payload);
          const path = field.path(eventIndex % (valid.events as Json[]).length);
          const value = replacement === undefined ? undefined : roundTrip({ v: replacement }).v;
          // Deleting an optional field, or a replacement that happens to be valid, is not a mutation.
          fc.pre(value === undefined ? field.required : !field.valid(value));
          tried++;
          const body = mutate(valid, path, value);
          const url = payload.profileLess ? '/track?profile_less=true' : '/track';
          const res = await service.post(url, JSON.stringify(body));
          const label = `${path.join('.')} = ${JSON.stringify(value)?.slice(0, 200)}`;
          const error = assertError(answerOf(res), 422, label);
          const named = (error.detail as Json[]).some(
            (item) =>
              item.type === 'value_error.depth' ||
              JSON.stringify((item.loc as Loc).slice(1, 1 + path.length)) === JSON.stringify(path),
          );
          assert.ok(named, `detail does not name ${path.join('.')}: ${res.body}`);
          const sessionId = body.session?.id;
          if (typeof sessionId === 'string' && codePoints(sessionId) <= 128 && sessionId.length > 0)
            assert.equal((await service.get(`/session/${encodeURIComponent(sessionId)}`)).statusCode, 404);
          assert.equal(await countEvents(service), 0);
        }),
        { seed: 424242, numRuns: RUNS },
      );
      assert.ok(tried >= RUNS / 2, `only ${tried} mutations were tried`);
      t.diagnostic(`${tried} invalid payloads, all 422, nothing stored`);
    });
  });
}

// --- Random bodies ----------------------------------------------------------------------------

const validText = JSON.stringify({
  source: { id: 'src-1' },
  session: { id: 'fuzz-bytes' },
  options: { debugger: true },
  events: [{ type: 'page-view', properties: { path: '/' } }],
});

const bodyArb: fc.Arbitrary<string | Buffer> = fc.oneof(
  fc.uint8Array({ maxLength: 512 }).map((bytes) => Buffer.from(bytes)),
  fc.string({ unit: 'binary', maxLength: 512 }),
  fc.string({ unit: fc.constantFrom(...'{}[]":,0123456789.eE+-nulltruefalse \\'.split('')), maxLength: 200 }),
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
  // A valid payload with a slice cut out and random text put in its place.
  fc
    .tuple(fc.nat(validText.length), fc.nat(20), fc.string({ unit: 'binary', maxLength: 10 }))
    .map(([at, cut, insert]) => validText.slice(0, at) + insert + validText.slice(at + cut)),
  // A valid payload with some of its bytes flipped.
  fc
    .array(fc.tuple(fc.nat(validText.length - 1), fc.integer({ min: 0, max: 255 })), {
      minLength: 1,
      maxLength: 4,
    })
    .map((flips) => {
      const bytes = Buffer.from(validText);
      for (const [at, byte] of flips) bytes[at] = byte;
      return bytes;
    }),
);

const endpointArb = fc.constantFrom(
  { url: '/track', headers: {} },
  { url: '/track?profile_less=true', headers: {} },
  { url: '/collect/fuzz/src-1', headers: {} },
  { url: '/event-source', headers: AUTH },
  { url: '/event/management', headers: AUTH },
);

const contentTypeArb = fc.constantFrom(
  undefined,
  'application/json',
  'text/plain',
  'application/json; charset=utf-16',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  '',
);

for (const store of STORES) {
  const RUNS = RUNS_ON[store];
  describe(`fuzz: random bodies (${store})`, () => {
    let service: Service;
    before(async () => {
      service = await startOn(store);
    });
    after(() => service.close());

    test(`random bytes and strings never get a 5xx, and errors carry a detail (${RUNS} runs)`, async (t) => {
      const statuses = new Map<number, number>();
      await fc.assert(
        fc.asyncProperty(bodyArb, endpointArb, contentTypeArb, async (body, endpoint, contentType) => {
          const headers: Record<string, string> = { ...endpoint.headers };
          if (contentType !== undefined) headers['content-type'] = contentType;
          const res = await service.app.inject({ method: 'POST', url: endpoint.url, headers, payload: body });
          statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
          assert.ok(res.statusCode < 500, `${endpoint.url}: ${res.statusCode} ${res.body.slice(0, 300)}`);
          if (res.statusCode >= 400) assertError(answerOf(res), res.statusCode, endpoint.url);
        }),
        { seed: 777, numRuns: RUNS },
      );
      // The service still answers, and the corpus reached the parser, the schema and the pipeline.
      expectStatus(await service.app.inject({ method: 'GET', url: '/health' }), 200);
      assert.ok(statuses.has(400) && statuses.has(422), JSON.stringify([...statuses]));
      t.diagnostic(`statuses: ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`);
    });
  });
}
