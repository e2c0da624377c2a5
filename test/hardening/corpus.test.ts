/**
 * A corpus of malformed, oversized and hostile inputs sent through every public endpoint
 * (docs/api.md #conventions, #post-track, #post-collect, #authentication, #errors): each answers the 4xx the reference prescribes with a JSON `detail`,
 * nothing is stored, and the service keeps answering. The worst inputs also go through a real
 * listening server, to be sure none of them brings the process down.
 */
import assert from 'node:assert/strict';
import { connect, type AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { CursorCodec } from '../../src/http/paging.js';
import { AUTH, type Service } from '../helpers.js';
import { usePostgres } from '../support/postgres.js';
import { STORES, startOn } from '../routes/profiles-support.js';
import {
  allEvents,
  answerOf,
  assertError,
  countEvents,
  expectStatus,
  sendRaw,
  validPayload,
  type RawRequest,
  type Json,
  type Loc,
} from './support.js';

// Every case runs against both stores: what reaches the store must be stored (or refused) alike.
usePostgres();

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';

interface Case {
  name: string;
  method: Method;
  url: string;
  body?: string | Buffer;
  headers?: Record<string, string>;
  /** The status the reference prescribes, or the acceptable ones where it leaves a choice. */
  status: number | number[];
  /** A field path that some `detail` item must end with. */
  loc?: Loc;
  /** The exact `detail` string, where the reference fixes it. */
  detail?: string;
}

const MAX_DEPTH = 32;
const BODY_LIMIT = 1_048_576;

/** `levels` nested objects around 1: `{"a":{"a":…1…}}`. */
function nestedObject(levels: number): string {
  return '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
}

const deepArray = '['.repeat(200_000) + ']'.repeat(200_000);
/** The object variant, with empty keys so that 200,000 levels stay under TRACK_BODY_LIMIT. */
const deepObject = '{"":'.repeat(200_000) + '1' + '}'.repeat(200_000);
const fiveMegabytes = JSON.stringify({ ...validPayload('big'), padding: 'x'.repeat(5 * 1024 * 1024) });
const digits400 = '9'.repeat(400);

// ---------------------------------------------------------------------------------------------
// Bodies that are wrong whatever the endpoint: [name, body, status on /track, status on /collect,
// content-type]. A /collect status of null means the input is valid there (an empty body is `{}`).
type BodyInput = [string, string | Buffer, number, number | null, string?];
const BODY_INPUTS: BodyInput[] = [
  ['empty body', '', 422, null],
  ['whitespace only', ' \n\t ', 422, null],
  ['null', 'null', 422, 422],
  ['empty array', '[]', 422, 422],
  ['array of events', '[{"type":"page-view"}]', 422, 422],
  ['number 1', '1', 422, 422],
  ['string "x"', '"x"', 422, 422],
  ['true', 'true', 422, 422],
  ['truncated JSON', '{"source":{"id":"src-1"},"session":', 400, 400],
  ['single brace', '{', 400, 400],
  ['invalid UTF-8 bytes', Buffer.from([0xff, 0xfe, 0xfd, 0x7b]), 400, 400],
  [
    'invalid UTF-8 byte in place of a value',
    Buffer.concat([Buffer.from('{"a":'), Buffer.from([0xc3, 0x28]), Buffer.from('}')]),
    400,
    400,
  ],
  ['bare NaN', 'NaN', 400, 400],
  ['bare Infinity', 'Infinity', 400, 400],
  ['NaN as a value', '{"a":NaN}', 400, 400],
  ['-Infinity as a value', '{"a":-Infinity}', 400, 400],
  ['undefined', 'undefined', 400, 400],
  ['1e400', '1e400', 422, 422],
  ['1e400 as a value', '{"a":1e400}', 422, 422],
  ['-1e400 in an array', '{"a":[1,-1e400]}', 422, 422],
  ['400-digit integer', digits400, 422, 422],
  ['400-digit integer as a value', `{"a":${digits400}}`, 422, 422],
  ['200,000-deep arrays', deepArray, 422, 422],
  ['200,000-deep objects', deepObject, 422, 422],
  ['200,000 unclosed arrays', '['.repeat(200_000), 400, 400],
  ['100,000 unclosed objects', '{"a":'.repeat(100_000), 400, 400],
  ['form-urlencoded', 'a=1&b=2', 400, 400, 'application/x-www-form-urlencoded'],
  [
    'multipart form data',
    '--xyz\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--xyz--\r\n',
    400,
    400,
    'multipart/form-data; boundary=xyz',
  ],
  ['XML', '<?xml version="1.0"?><track/>', 400, 400, 'application/xml'],
  ['single-quoted JSON', "{'source': {'id': 'src-1'}}", 400, 400],
  ['trailing comma', '{"a":1,}', 400, 400],
  ['comment', '{"a":1 /* note */}', 400, 400],
  ['two documents', '{}{}', 400, 400],
  ['invalid escape', '{"a":"\\x41"}', 400, 400],
  ['raw control character in a string', '{"a":"\u0001"}', 400, 400],
  ['body over TRACK_BODY_LIMIT (5 MB)', fiveMegabytes, 413, 413],
];

const trackUrls = ['/track', '/track?profile_less=true'];

function bodyCases(): Case[] {
  const cases: Case[] = [];
  for (const [name, body, status, collectStatus, contentType] of BODY_INPUTS) {
    const headers = contentType ? { 'content-type': contentType } : undefined;
    for (const url of trackUrls) cases.push({ name: `${name}`, method: 'POST', url, body, headers, status });
    if (collectStatus !== null)
      cases.push({
        name,
        method: 'POST',
        url: '/collect/page-view/src-1',
        body,
        headers,
        status: collectStatus,
      });
    for (const url of ['/event-source', '/event/management', '/profile-rule'])
      cases.push({ name, method: 'POST', url, body, headers: { ...AUTH, ...headers }, status });
  }
  return cases;
}

// ---------------------------------------------------------------------------------------------
// Tracker payloads with one field of the wrong type or missing (docs/api.md #track-request, #track-options): 422 naming it.
const NOT_OBJECTS: unknown[] = ['x', 1, true, []];
const NOT_STRINGS: unknown[] = [1, true, {}, [], null];
const NOT_BOOLEANS: unknown[] = ['true', 1, 0, null, {}, []];

/** Sets (or, with `undefined`, deletes) the value at `path` in a deep copy of `base`. */
function withField(base: Json, path: Loc, value: unknown): Json {
  const copy = JSON.parse(JSON.stringify(base)) as Json;
  let target: Json = copy;
  for (const key of path.slice(0, -1)) target = target[key as string];
  const last = path[path.length - 1]!;
  if (value === undefined) delete target[last as string];
  else target[last as string] = value;
  return copy;
}

const BAD_TIMES: unknown[] = [
  1_700_000_000_000,
  true,
  {},
  [],
  '',
  'now',
  '2026-11-23',
  '2026-11-23T20:16:01',
  '2026-02-30T00:00:00Z',
  '2026-11-23T20:16:60Z',
  '+275760-09-13T00:00:00Z',
  '-000001-01-01T00:00:00Z',
  '0000-01-01T00:00:00Z',
  `2026-11-23T20:16:01.${'9'.repeat(100_000)}Z`,
  '2026-11-23T20:16:01Z\u0000',
];

const fullPayload: Json = {
  source: { id: 'src-1' },
  session: { id: 'corpus-session' },
  profile: { id: 'corpus-profile' },
  context: { page: { url: 'https://shop.example/' } },
  properties: { plan: 'free' },
  options: { debugger: false, profile: false, saveSession: true, saveEvents: true },
  events: [
    { type: 'page-view', properties: { path: '/' } },
    { type: 'click', properties: {}, context: {}, options: { save: true } },
  ],
};

const FIELD_TYPES: [Loc, unknown[]][] = [
  [['source'], [...NOT_OBJECTS, null]],
  [
    ['source', 'id'],
    [...NOT_STRINGS, '', 's'.repeat(129)],
  ],
  [['session'], [...NOT_OBJECTS, null]],
  [
    ['session', 'id'],
    [...NOT_STRINGS, '', 's'.repeat(129)],
  ],
  [['profile'], NOT_OBJECTS],
  [
    ['profile', 'id'],
    [1, true, {}, [], 'p'.repeat(129)],
  ],
  [['context'], NOT_OBJECTS],
  [['properties'], NOT_OBJECTS],
  [['options'], NOT_OBJECTS],
  [['options', 'debugger'], NOT_BOOLEANS],
  [['options', 'profile'], NOT_BOOLEANS],
  [['options', 'saveSession'], NOT_BOOLEANS],
  [['options', 'saveEvents'], NOT_BOOLEANS],
  [['events'], [...NOT_OBJECTS.filter((v) => !Array.isArray(v)), {}, null, []]],
  [
    ['events', 1],
    ['x', 1, true, [], null],
  ],
  [
    ['events', 1, 'type'],
    [...NOT_STRINGS, '', 't'.repeat(256)],
  ],
  [['events', 1, 'properties'], NOT_OBJECTS],
  [['events', 1, 'context'], NOT_OBJECTS],
  [['events', 1, 'options'], NOT_OBJECTS],
  [['events', 1, 'options', 'save'], NOT_BOOLEANS],
  // Client event ids and times (docs/api.md#duplicates, #event-time).
  [
    ['events', 1, 'id'],
    [1, true, {}, [], '', 'i'.repeat(129), 'i'.repeat(100_000)],
  ],
  [['events', 1, 'timestamp'], BAD_TIMES],
  [['sent_at'], BAD_TIMES],
];

const REQUIRED: Loc[] = [
  ['source'],
  ['source', 'id'],
  ['session'],
  ['session', 'id'],
  ['events'],
  ['events', 1, 'type'],
];

function payloadCases(): Case[] {
  const cases: Case[] = [];
  for (const url of trackUrls) {
    for (const [path, values] of FIELD_TYPES) {
      for (const value of values) {
        const body = JSON.stringify(withField(fullPayload, path, value));
        const shown =
          typeof value === 'string' && value.length > 20 ? `${value.length} chars` : JSON.stringify(value);
        cases.push({
          name: `${path.join('.')} = ${shown}`,
          method: 'POST',
          url,
          body,
          status: 422,
          loc: path,
        });
      }
    }
    for (const path of REQUIRED) {
      const body = JSON.stringify(withField(fullPayload, path, undefined));
      cases.push({ name: `${path.join('.')} missing`, method: 'POST', url, body, status: 422, loc: path });
    }
    const tooMany = Array.from({ length: 1001 }, () => ({ type: 'a' }));
    cases.push(
      {
        name: 'more events than TRACK_MAX_EVENTS',
        method: 'POST',
        url,
        body: JSON.stringify(withField(fullPayload, ['events'], tooMany)),
        status: 413,
      },
      {
        name: `event properties nested past TRACK_MAX_DEPTH`,
        method: 'POST',
        url,
        body: JSON.stringify(
          withField(fullPayload, ['events', 0, 'properties'], JSON.parse(nestedObject(40))),
        ),
        status: 422,
      },
      {
        name: `top-level context nested past TRACK_MAX_DEPTH`,
        method: 'POST',
        url,
        body: JSON.stringify(withField(fullPayload, ['context'], JSON.parse(nestedObject(MAX_DEPTH)))),
        status: 422,
      },
      {
        name: 'non-finite number in event properties',
        method: 'POST',
        url,
        body: JSON.stringify(fullPayload).replace('"path":"/"', '"path":1e999'),
        status: 422,
        loc: ['events', 0, 'properties', 'path'],
      },
      {
        name: 'unknown source',
        method: 'POST',
        url,
        body: JSON.stringify(withField(fullPayload, ['source', 'id'], 'nope')),
        status: 401,
        detail: 'Invalid event source `nope`',
      },
      {
        name: 'disabled source',
        method: 'POST',
        url,
        body: JSON.stringify(withField(fullPayload, ['source', 'id'], 'disabled')),
        status: 401,
        detail: 'Event source disabled.',
      },
    );
  }
  return cases;
}

// ---------------------------------------------------------------------------------------------
const collectCases: Case[] = [
  {
    name: 'unknown source',
    method: 'POST',
    url: '/collect/page-view/nope',
    body: '{}',
    status: 401,
    detail: 'Invalid event source `nope`',
  },
  {
    name: 'disabled source',
    method: 'POST',
    url: '/collect/page-view/disabled',
    body: '{}',
    status: 401,
    detail: 'Event source disabled.',
  },
  {
    name: 'body nested past TRACK_MAX_DEPTH',
    method: 'POST',
    url: '/collect/page-view/src-1',
    body: nestedObject(MAX_DEPTH + 1),
    status: 422,
  },
  {
    name: 'empty event type',
    method: 'POST',
    url: '/collect//src-1',
    body: '{}',
    status: 422,
    loc: ['event_type'],
  },
  {
    name: 'event type of 256 characters',
    method: 'POST',
    url: `/collect/${'t'.repeat(256)}/src-1`,
    body: '{}',
    status: 422,
    loc: ['event_type'],
  },
  {
    name: 'source id of 129 characters',
    method: 'POST',
    url: `/collect/page-view/${'s'.repeat(129)}`,
    body: '{}',
    status: 422,
    loc: ['source_id'],
  },
  {
    name: 'event type of 5,000 characters',
    method: 'POST',
    url: `/collect/${'t'.repeat(5000)}/src-1`,
    body: '{}',
    status: [400, 414, 422],
  },
];

const sourceCases: Case[] = (
  [
    [{ id: 1 }, ['id']],
    [{ id: '' }, ['id']],
    [{ id: 's'.repeat(129) }, ['id']],
    [{ id: 'x', enabled: 'yes' }, ['enabled']],
    [{ id: 'x', enabled: null }, ['enabled']],
    [{ id: 'x', transitional: 1 }, ['transitional']],
    [{ id: 'x', consent: 'true' }, ['consent']],
    [{ id: 'x', returns_profile: [] }, ['returns_profile']],
    [{ id: 'x', name: 1 }, ['name']],
    [{ id: 'x', tags: 'a,b' }, ['tags']],
    [{ id: 'x', tags: [1] }, ['tags', 0]],
  ] as [Json, Loc][]
).map(([body, loc]) => ({
  name: `${JSON.stringify(body).slice(0, 60)}`,
  method: 'POST' as const,
  url: '/event-source',
  body: JSON.stringify(body),
  headers: AUTH,
  status: 422,
  loc,
}));

const eventTypeCases: Case[] = (
  [
    [{}, ['event_type']],
    [{ event_type: 1 }, ['event_type']],
    [{ event_type: '' }, ['event_type']],
    [{ event_type: 't'.repeat(256) }, ['event_type']],
    [{ event_type: 'x', validation: 'on' }, ['validation']],
    [{ event_type: 'x', validation: { enabled: 'yes' } }, ['validation', 'enabled']],
    [{ event_type: 'x', validation: { json_schema: 'x' } }, ['validation', 'json_schema']],
    [
      { event_type: 'x', validation: { json_schema: { 'not a target': {} } } },
      ['json_schema', 'not a target'],
    ],
    [
      { event_type: 'x', validation: { json_schema: { 'event@properties': 5 } } },
      ['json_schema', 'event@properties'],
    ],
    [
      {
        event_type: 'x',
        validation: { json_schema: { 'event@properties': { $ref: 'https://example.com/s.json' } } },
      },
      ['json_schema', 'event@properties'],
    ],
    [
      {
        event_type: 'x',
        validation: { json_schema: { 'event@...': { $schema: 'http://json-schema.org/draft-04/schema#' } } },
      },
      ['json_schema', 'event@...'],
    ],
  ] as [Json, Loc][]
).map(([body, loc]) => ({
  name: `${JSON.stringify(body).slice(0, 70)}`,
  method: 'POST' as const,
  url: '/event/management',
  body: JSON.stringify(body),
  headers: AUTH,
  status: 422,
  loc,
}));

// Profile rules (docs/api.md #profile-rules): paths outside the roots, prototype keys, values of
// 1 MB, thousands of operations, wrong types. Raw JSON text where `__proto__` must be a real key.
const set = (path: string, extra: Json = { value: 1 }) => ({ op: 'set', path, ...extra });
const ruleCases: Case[] = (
  [
    [{ operations: [set('traits.public.x')] }, ['event_type']],
    [{ event_type: 'x' }, ['operations']],
    [{ event_type: 'x', operations: {} }, ['operations']],
    [{ event_type: 'x', operations: [] }, ['operations']],
    [{ event_type: 'x', operations: [null] }, ['operations', 0]],
    [{ event_type: 'x', operations: [{ op: 'eval' }] }, ['operations', 0, 'op']],
    [{ event_type: 'x', enabled: 'yes', operations: [set('traits.public.x')] }, ['enabled']],
    [{ event_type: 'x', operations: [set('stats.visits')] }, ['operations', 0, 'path']],
    [{ event_type: 'x', operations: [set('id')] }, ['operations', 0, 'path']],
    [{ event_type: 'x', operations: [set('ids.0')] }, ['operations', 0, 'path']],
    [{ event_type: 'x', operations: [set('traits.public')] }, ['operations', 0, 'path']],
    [{ event_type: 'x', operations: [set('traits.public.__proto__.polluted')] }, ['operations', 0, 'path']],
    [{ event_type: 'x', operations: [set('consents.constructor.prototype')] }, ['operations', 0, 'path']],
    [{ event_type: 'x', operations: [set('interests.prototype')] }, ['operations', 0, 'path']],
    [
      { event_type: 'x', operations: [set('traits.public.x', { from: 'properties.__proto__' })] },
      ['operations', 0, 'from'],
    ],
    [
      { event_type: 'x', operations: [set('traits.public.x', { value: 'x'.repeat(1_000_000) })] },
      ['operations', 0, 'value'],
    ],
    [
      { event_type: 'x', operations: Array.from({ length: 5000 }, () => set('traits.public.x')) },
      ['operations'],
    ],
    [
      { event_type: 'x', operations: [{ op: 'identify', type: 'x'.repeat(33), value: 'a' }] },
      ['operations', 0, 'type'],
    ],
    [{ event_type: 'x', operations: [{ op: 'add_segment', value: { $ne: 1 } }] }, ['operations', 0, 'value']],
  ] as [Json, Loc][]
)
  .map(([body, loc]): [string, Loc] => [JSON.stringify(body), loc])
  .concat([
    [
      '{"event_type":"x","operations":[{"__proto__":{"op":"set"},"path":"traits.public.x","value":1}]}',
      ['operations', 0, 'op'],
    ],
    [
      '{"event_type":"x","__proto__":{"operations":[]},"operations":[{"op":"unset","path":"__proto__"}]}',
      ['operations', 0, 'path'],
    ],
  ])
  .map(([body, loc]) => ({
    name: body.slice(0, 70),
    method: 'POST' as const,
    url: '/profile-rule',
    body,
    headers: AUTH,
    status: 422,
    loc,
  }));

// ---------------------------------------------------------------------------------------------
const foreignCursor = new CursorCodec('another-token').encode('events', {
  insert: new Date().toISOString(),
  id: 'x',
});
const [cursorPayload] = foreignCursor.split('.');
const forgedCursor = `${Buffer.from(JSON.stringify(['2000-01-01T00:00:00.000Z', 'x'])).toString('base64url')}.${'A'.repeat(22)}`;

const queryCases: Case[] = [
  ...['0', '-1', 'abc', '100000', '1001', '1.5', '', '1e3x', '1&limit=2'].map((limit) => ({
    name: `limit=${limit}`,
    method: 'GET' as const,
    url: `/events?limit=${limit}`,
    headers: AUTH,
    status: 422,
    loc: ['limit'],
  })),
  ...[
    ['garbage', 'abc'],
    ['two dots', 'a.b.c'],
    ['empty parts', '.'],
    ['forged signature', forgedCursor],
    ['signed with another token', foreignCursor],
    ['payload without signature', `${cursorPayload}.`],
    ['5,000 characters', 'c'.repeat(5000)],
    ['percent-encoded NUL', '%00.%00'],
  ].map(([name, cursor]) => ({
    name: `cursor not issued: ${name}`,
    method: 'GET' as const,
    url: `/events?cursor=${cursor}`,
    headers: AUTH,
    status: 422,
    loc: ['cursor'],
  })),
  {
    name: 'session_id of 129 characters',
    method: 'GET',
    url: `/events?session_id=${'s'.repeat(129)}`,
    headers: AUTH,
    status: 422,
    loc: ['session_id'],
  },
  {
    name: 'huge query string (100 kB)',
    method: 'GET',
    url: `/events?session_id=${'s'.repeat(100_000)}`,
    headers: AUTH,
    status: 422,
    loc: ['session_id'],
  },
  {
    name: 'profile_id of 129 characters',
    method: 'GET',
    url: `/events?profile_id=${'p'.repeat(129)}`,
    headers: AUTH,
    status: 422,
    loc: ['profile_id'],
  },
  {
    name: 'source_id of 129 characters',
    method: 'GET',
    url: `/events?source_id=${'p'.repeat(129)}`,
    headers: AUTH,
    status: 422,
    loc: ['source_id'],
  },
  {
    name: 'type of 256 characters',
    method: 'GET',
    url: `/events?type=${'t'.repeat(256)}`,
    headers: AUTH,
    status: 422,
    loc: ['type'],
  },
  {
    name: 'empty session_id',
    method: 'GET',
    url: '/events?session_id=',
    headers: AUTH,
    status: 422,
    loc: ['session_id'],
  },
  {
    name: 'rejected list limit=0',
    method: 'GET',
    url: '/event/rejected?limit=0',
    headers: AUTH,
    status: 422,
    loc: ['limit'],
  },
  {
    name: 'rejected list cursor not issued',
    method: 'GET',
    url: '/event/rejected?cursor=abc',
    headers: AUTH,
    status: 422,
    loc: ['cursor'],
  },
  ...['email', ':x', 'Email:x', 'e-mail:a', `${'a'.repeat(33)}:x`, `email:${'x'.repeat(400)}`].map(
    (identity) => ({
      name: `identity=${identity.slice(0, 40)}`,
      method: 'GET' as const,
      url: `/profiles?identity=${encodeURIComponent(identity)}`,
      headers: AUTH,
      status: 422,
    }),
  ),
  {
    name: 'profiles without identity',
    method: 'GET' as const,
    url: '/profiles',
    headers: AUTH,
    status: 422,
  },
  ...['since', 'until'].flatMap((name) =>
    ['soon', '2026-11-23', '2026-11-23T20:16:01', '9999-99-99T99:99:99Z', 'x'.repeat(5000)].map(
      (value): Case => ({
        name: `${name}=${value.slice(0, 30)}`,
        method: 'GET',
        url: `/events?${name}=${encodeURIComponent(value)}`,
        headers: AUTH,
        status: 422,
        loc: ['querystring', name],
      }),
    ),
  ),
  {
    name: 'client_id of 129 characters',
    method: 'GET',
    url: `/events?client_id=${'c'.repeat(129)}`,
    headers: AUTH,
    status: 422,
    loc: ['querystring', 'client_id'],
  },
  {
    name: 'profile_less=maybe',
    method: 'POST',
    url: '/track?profile_less=maybe',
    body: JSON.stringify(fullPayload),
    status: 422,
    loc: ['profile_less'],
  },
];

// ---------------------------------------------------------------------------------------------
const PATH_TRICKS: [Method, string][] = [
  ['GET', '/event/..%2F..%2Fetc%2Fpasswd'],
  ['GET', '/event/..%2f..%2f..%2fetc%2fshadow'],
  // (The test client resolves the dot segments: this is DELETE /, which no route answers; a GET
  // would reach the public index of GET /.)
  ['DELETE', '/event/%2e%2e'],
  ['GET', '/event/%00'],
  ['GET', '/event/a%00b'],
  ['GET', '/event/a%2Fb'],
  ['GET', `/event/'%20OR%201%3D1%20--`],
  ['GET', '/session/%00'],
  ['GET', '/session/..%2F..%2Fetc%2Fpasswd'],
  ['GET', '/profile/..%2F..%2Fetc%2Fpasswd'],
  ['DELETE', '/profile/%00'],
  ['GET', '/event-source/..%2Fsrc-1'],
  ['DELETE', '/event-source/%2e%2e%2fsrc-1'],
  ['GET', '/event/management/..%2F..%2F'],
  ['DELETE', '/event/management/%00'],
  ['GET', '/event/rejected/%00'],
  ['POST', '/event/rejected/..%2F..%2F/replay'],
  ['GET', '/event/'],
];

const pathCases: Case[] = [
  ...PATH_TRICKS.map(([method, url]) => ({ name: 'path trick', method, url, headers: AUTH, status: 404 })),
  {
    name: 'id of 256 characters',
    method: 'GET',
    url: `/event/${'e'.repeat(256)}`,
    headers: AUTH,
    status: [404, 422],
  },
  {
    name: 'id of 5,000 characters',
    method: 'GET',
    url: `/event/${'e'.repeat(5000)}`,
    headers: AUTH,
    status: [400, 404, 414, 422],
  },
  {
    name: 'session id of 300 characters',
    method: 'GET',
    url: `/session/${'s'.repeat(300)}`,
    headers: AUTH,
    status: [404, 422],
  },
  {
    name: 'profile id of 100,000 characters',
    method: 'GET',
    url: `/profile/${'p'.repeat(100_000)}`,
    headers: AUTH,
    status: [400, 404, 414, 422],
  },
  { name: 'malformed percent-encoding', method: 'GET', url: '/event/%E0%A4%A', headers: AUTH, status: 400 },
  { name: 'lone percent sign', method: 'GET', url: '/event/%', headers: AUTH, status: 400 },
  { name: 'invalid hex escape', method: 'GET', url: '/session/%zz', headers: AUTH, status: 400 },
];

const ROUTES_UNKNOWN: [Method, string][] = [
  ['GET', '/nope'],
  ['POST', '/nope'],
  ['GET', '/.env'],
  ['GET', '/admin'],
  ['GET', '/track'],
  ['PUT', '/track'],
  ['PATCH', '/track'],
  ['DELETE', '/track'],
  ['GET', '/track%00'],
  ['GET', '/collect/page-view/src-1'],
  ['PUT', '/collect/page-view/src-1'],
  ['POST', '/collect/page-view'],
  ['POST', '/collect/page-view/src-1/extra'],
  ['POST', '/events'],
  ['GET', '//events'],
  ['GET', '/events/'],
  ['PUT', '/event-source'],
  ['PATCH', '/event/management'],
  ['POST', '/health'],
  ['DELETE', '/health'],
  ['OPTIONS', '/events'],
];

const routeCases: Case[] = ROUTES_UNKNOWN.map(([method, url]) => ({
  name: 'unknown route or method',
  method,
  url,
  body:
    method === 'GET' || method === 'DELETE' || method === 'OPTIONS' ? undefined : JSON.stringify(fullPayload),
  headers: AUTH,
  status: 404,
}));

// Management endpoints without (or with a wrong) token: 401 before anything else, even a bad body.
const MANAGEMENT: [Method, string][] = [
  ['POST', '/event-source'],
  ['GET', '/event-sources'],
  ['GET', '/event-source/src-1'],
  ['DELETE', '/event-source/src-1'],
  ['POST', '/event/management'],
  ['GET', '/event/management'],
  ['GET', '/event/management/page-view'],
  ['DELETE', '/event/management/page-view'],
  ['GET', '/event/x'],
  ['GET', '/session/x'],
  ['GET', '/profile/x'],
  ['DELETE', '/profile/x'],
  ['GET', '/events'],
  ['GET', '/event/rejected'],
  ['GET', '/event/rejected/x'],
  ['POST', '/event/rejected/x/replay'],
  ['POST', '/profile-rule'],
  ['GET', '/profile-rules'],
  ['GET', '/profile-rule/x'],
  ['DELETE', '/profile-rule/x'],
  ['GET', '/profiles?identity=email:a'],
];
const BAD_AUTH: [string, Record<string, string>][] = [
  ['no token', {}],
  ['wrong token', { authorization: 'Bearer wrong-token' }],
  ['basic auth', { authorization: `Basic ${Buffer.from('admin:test-token').toString('base64')}` }],
  ['token without scheme', { authorization: 'test-token' }],
  ['token with a suffix', { authorization: 'Bearer test-token-and-more' }],
  ['10 kB token', { authorization: `Bearer ${'x'.repeat(10_000)}` }],
];
const authCases: Case[] = [
  ...MANAGEMENT.map(([method, url]) => ({
    name: 'no token',
    method,
    url,
    body: method === 'POST' ? '{' : undefined,
    status: 401,
    detail: 'Not authenticated',
  })),
  ...BAD_AUTH.map(([name, headers]) => ({
    name,
    method: 'GET' as const,
    url: '/events',
    headers,
    status: 401,
    detail: 'Not authenticated',
  })),
];

const CASES: Case[] = [
  ...bodyCases(),
  ...payloadCases(),
  ...collectCases,
  ...sourceCases,
  ...eventTypeCases,
  ...ruleCases,
  ...queryCases,
  ...pathCases,
  ...routeCases,
  ...authCases,
];

function label(c: Case): string {
  const url = c.url.length > 60 ? `${c.url.slice(0, 57)}...` : c.url;
  return `${c.method} ${url}: ${c.name}`;
}

for (const store of STORES) {
  describe(`bad input corpus (${CASES.length} requests) (${store})`, () => {
    let service: Service;
    before(async () => {
      service = await startOn(store);
      await service.createSource({ id: 'disabled', enabled: false });
    });
    after(() => service.close());

    test('the corpus has more than 40 distinct inputs and covers every public endpoint', () => {
      assert.ok(CASES.length > 40);
      assert.ok(BODY_INPUTS.length >= 36);
      // The deep bodies are refused for their depth, not their size; the 5 MB one for its size.
      assert.ok(deepArray.length < BODY_LIMIT && deepObject.length < BODY_LIMIT);
      assert.ok(fiveMegabytes.length > BODY_LIMIT);
      for (const path of [
        '/track',
        '/track?profile_less=true',
        '/collect/',
        '/event-source',
        '/event/management',
        '/profile-rule',
        '/profiles',
        '/events',
        '/event/',
      ])
        assert.ok(
          CASES.some((c) => c.url.startsWith(path)),
          path,
        );
    });

    for (const c of CASES) {
      test(label(c), async () => {
        const headers: Record<string, string> = { ...c.headers };
        if (c.body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
          headers['content-type'] = 'application/json';
        const res = await service.app.inject({ method: c.method, url: c.url, headers, payload: c.body });
        const body = assertError(answerOf(res), c.status, label(c), c.loc);
        if (c.detail !== undefined) assert.equal(body.detail, c.detail);
      });
    }

    test('after the corpus nothing is stored and the service still answers', async () => {
      assert.equal(await countEvents(service), 0);
      expectStatus(await service.app.inject({ method: 'GET', url: '/health' }), 200, '/health');
      const res = await service.post('/track', validPayload('after-corpus', { options: { debugger: true } }));
      const body = expectStatus(res, 200, '/track');
      assert.equal(body.debugging.events.ids.length, 1);
      assert.equal(await countEvents(service), 1);
    });

    test('properties nested exactly TRACK_MAX_DEPTH levels deep are accepted (the boundary)', async () => {
      // body(1) > events(2) > event(3) > properties(4) > …: properties and what it holds span levels 4 to 32.
      const properties = JSON.parse(nestedObject(MAX_DEPTH - 3)) as Json;
      const body = validPayload('depth-boundary', { events: [{ type: 'deep', properties }] });
      expectStatus(await service.post('/track', body), 200, 'depth boundary');
      const deeper = validPayload('depth-boundary-2', {
        events: [{ type: 'deep', properties: { a: properties } }],
      });
      assertError(answerOf(await service.post('/track', deeper)), 422, 'one level deeper');
    });
  });
}

// ---------------------------------------------------------------------------------------------
// The worst inputs through a real socket: the process must survive and keep answering.

for (const store of STORES) {
  describe(`the worst inputs against a real listening server (${store})`, () => {
    let service: Service;
    let port: number;
    before(async () => {
      service = await startOn(store);
      await service.app.listen({ port: 0, host: '127.0.0.1' });
      port = (service.app.server.address() as AddressInfo).port;
    });
    after(() => service.close());

    const json = { 'content-type': 'application/json' };
    const worst: [string, RawRequest, number][] = [
      ['200,000-deep arrays', { path: '/track', headers: json, body: deepArray }, 422],
      ['200,000-deep objects', { path: '/track', headers: json, body: deepObject }, 422],
      ['200,000 unclosed arrays', { path: '/track', body: '['.repeat(200_000) }, 400],
      ['200,000-deep arrays on /collect', { path: '/collect/a/src-1', body: deepArray }, 422],
      ['5 MB body with Content-Length', { path: '/track', headers: json, body: fiveMegabytes }, 413],
      [
        '5 MB body, chunked, no Content-Length',
        {
          path: '/track',
          headers: json,
          chunks: Array.from({ length: 80 }, () => Buffer.alloc(65_536, 0x20)),
        },
        413,
      ],
      ['5 MB body on /collect', { path: '/collect/a/src-1', body: fiveMegabytes }, 413],
      ['5 MB body on the management API', { path: '/event-source', headers: AUTH, body: fiveMegabytes }, 413],
      [
        'invalid UTF-8',
        { path: '/track', body: Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]) },
        400,
      ],
      ['invalid UTF-8 on /collect', { path: '/collect/a/src-1', body: Buffer.from([0xc0, 0xaf, 0xff]) }, 400],
      ['1e400', { path: '/track', body: `{"a":1e400}` }, 422],
      ['malformed URL', { method: 'GET', path: '/event/%E0%A4%A', headers: AUTH }, 400],
    ];

    for (const [name, request, status] of worst) {
      test(`${name}: ${status}`, async () => {
        assertError(await sendRaw(port, request), status, name);
      });
    }

    test('all of them at once, then the process still answers /health and /track', async () => {
      const answers = await Promise.all(worst.map(([, request]) => sendRaw(port, request)));
      answers.forEach((answer, i) => assertError(answer, worst[i]![2], worst[i]![0]));
      const health = await fetch(`http://127.0.0.1:${port}/health`);
      assert.equal(health.status, 200);
      const res = await fetch(`http://127.0.0.1:${port}/track`, {
        method: 'POST',
        body: JSON.stringify(validPayload('after-worst', { options: { debugger: true } })),
      });
      assert.equal(res.status, 200);
      const body = (await res.json()) as Json;
      assert.equal(body.debugging.events.ids.length, 1);
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Hostile values the service takes and stores safely (docs/api.md#event-time, #client-address,
// #enrichment): far times, huge or broken headers, forged and garbage X-Forwarded-For.

/** Raw bytes of a whole HTTP request, answered as status and body (nothing is re-encoded). */
function rawRequest(port: number, head: Buffer, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0);
      resolve({ status, body: answer.slice(answer.indexOf('\r\n\r\n') + 4) });
    });
    socket.setTimeout(30_000, () => socket.destroy(new Error('timeout')));
    // Written without ending our side: the server answers, then closes (connection: close).
    socket.write(
      Buffer.concat([
        head,
        Buffer.from(`content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`),
      ]),
    );
  });
}

for (const store of STORES) {
  describe(`hostile values stored safely (${store})`, () => {
    let service: Service;
    let port: number;
    before(async () => {
      service = await startOn(store, { trustProxy: true });
      await service.app.listen({ port: 0, host: '127.0.0.1' });
      port = (service.app.server.address() as AddressInfo).port;
    });
    after(() => service.close());

    const body = (sid: string, extra: Json = {}) => JSON.stringify(validPayload(sid, extra));
    const storedOf = async (sid: string) => (await allEvents(service, { session_id: sid })) as Json[];

    test('times far in the past and far in the future are stored, clamped where the reference says', async () => {
      const res = await service.post(
        '/track',
        validPayload('far-times', {
          sent_at: '0001-01-01T00:00:00Z',
          events: [
            { type: 'past', timestamp: '0001-01-01T00:00:00Z' },
            { type: 'future', timestamp: '9999-12-31T23:59:59.999Z' },
          ],
        }),
      );
      expectStatus(res, 200, 'far times');
      const events = await storedOf('far-times');
      assert.equal(events.length, 2);
      for (const e of events)
        assert.match(e.metadata.time.create, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.equal(events.find((e) => e.type === 'future')!.metadata.time.source, 'clamped');
    });

    test('a User-Agent of 100 kB is a 431; of 10 kB it is read by its start', async () => {
      const big = await sendRaw(port, {
        path: '/track',
        headers: { 'user-agent': 'x'.repeat(100_000) },
        body: body('ua-100k'),
      });
      assertError(big, 431, 'User-Agent of 100 kB');
      const res = await service.post('/track', body('ua-10k'), {
        'user-agent': `Mozilla/5.0 ${'y'.repeat(10_000)}`,
      });
      expectStatus(res, 200, 'User-Agent of 10 kB');
      const session = expectStatus(await service.get('/session/ua-10k'), 200);
      assert.ok(JSON.stringify(session).length < 2000, 'nothing of it is stored whole');
    });

    test('invalid UTF-8 in User-Agent and X-Forwarded-For: answered, stored safely, never a 500', async () => {
      const head = Buffer.concat([
        Buffer.from('POST /track HTTP/1.1\r\nhost: x\r\nuser-agent: Mozilla/5.0 '),
        Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]),
        Buffer.from('\r\nx-forwarded-for: 203.0.113.'),
        Buffer.from([0xff]),
        Buffer.from(', 10.0.0.1\r\n'),
      ]);
      const answer = await rawRequest(port, head, body('bad-bytes'));
      assert.equal(answer.status, 200, answer.body);
      const [event] = await storedOf('bad-bytes');
      assert.equal(event!.metadata.ip, null, 'a forwarded value that is no address');
      expectStatus(await service.get('/session/bad-bytes'), 200);
    });

    test('X-Forwarded-For with hundreds of entries, or garbage: stored safely', async () => {
      const hops = Array.from({ length: 400 }, (_, i) => `10.0.${i >> 8}.${i & 255}`).join(', ');
      for (const [sid, header, ip] of [
        ['xff-many', `198.51.100.4, ${hops}`, '198.51.100.4'],
        ['xff-garbage', `'; DROP TABLE events; --, <script>`, null],
        ['xff-commas', ',,,  ,', '127.0.0.1'],
        ['xff-long', 'z'.repeat(8000), null],
      ] as const) {
        const res = await sendRaw(port, {
          path: '/track',
          headers: { 'x-forwarded-for': header },
          body: body(sid),
        });
        assert.equal(res.status, 200, `${sid}: ${res.body}`);
        const [event] = await storedOf(sid);
        assert.equal(event!.metadata.ip, ip, sid);
      }
    });
  });
}
