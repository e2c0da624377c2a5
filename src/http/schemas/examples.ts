/**
 * Examples of the request and response bodies shown by /docs ("Try it out" starts from the request
 * examples). They follow one story: the event source `demo` (created by the POST /event-source
 * example) receives a page view, then a purchase whose schema the POST /event/management example
 * defines. Reference: docs/api.md.
 */

const SESSION = '3a4b1c2d-0000-4000-8000-000000000001';
const PROFILE = '01a20a0d-1ece-7d15-ba46-4523680ef2e3';
const EVENT = '01a20a0d-4aa3-73cf-91ba-032f19ab331c';
const TIME = '2026-11-23T20:16:01.741Z';

/** A schema with its example (one, so that it is the media type's `example`). */
export function withExample<S extends object>(schema: S, example: unknown, description?: string): S {
  return { ...schema, examples: [example], ...(description ? { description } : {}) };
}

export const trackRequest = {
  source: { id: 'demo' },
  session: { id: SESSION },
  profile: { id: PROFILE },
  context: { page: { url: 'https://shop.example/', title: 'Shop' } },
  properties: { campaign: 'spring' },
  events: [{ type: 'page-view', properties: { path: '/' } }],
  options: { debugger: false, profile: false },
};

export const trackAnswer = {
  profile: { id: PROFILE },
  session: { id: SESSION },
  source: { consent: false },
  ux: [],
  response: {},
};

export const collectBody = { code: 'SPRING', value: 10 };

export const collectAnswer = { source: { consent: false }, event: { id: EVENT } };

export const sourceInput = { id: 'demo', name: 'Demo page', description: 'The demo page at /demo' };

export const sourceRecord = {
  id: 'demo',
  type: 'rest',
  name: 'Demo page',
  description: 'The demo page at /demo',
  enabled: true,
  transitional: false,
  consent: false,
  returns_profile: true,
  tags: [],
};

export const eventTypeInput = {
  event_type: 'purchase',
  name: 'Purchase',
  description: 'Purchases must carry a numeric price.',
  validation: {
    enabled: true,
    json_schema: {
      'event@properties': { type: 'object', properties: { price: { type: 'number' } }, required: ['price'] },
    },
  },
};

export const eventTypeRecord = { ...eventTypeInput, tags: [] };

export const eventRecord = {
  id: EVENT,
  type: 'page-view',
  properties: { path: '/' },
  context: { page: { url: 'https://shop.example/', title: 'Shop' } },
  source: { id: 'demo' },
  session: { id: SESSION },
  profile: { id: PROFILE },
  metadata: { time: { insert: TIME }, ip: '203.0.113.7', status: 'collected', profile_less: false },
};

export const sessionRecord = {
  id: SESSION,
  profile: { id: PROFILE },
  metadata: { time: { insert: TIME, update: '2026-11-23T20:18:42.003Z' } },
  context: { page: { url: 'https://shop.example/', title: 'Shop' } },
  properties: { campaign: 'spring' },
};

export const profileRecord = {
  id: PROFILE,
  metadata: {
    time: { insert: TIME, update: TIME, visit: { last: null, current: TIME, count: 1 } },
  },
  stats: { visits: 1 },
  traits: { public: {}, private: {} },
  consents: {},
  segments: [],
  interests: {},
};

const failure = {
  event: 0,
  type: 'purchase',
  target: 'event@properties',
  reason: '/price must be number',
};

export const rejectedRecord = {
  id: '01a20a0e-03b1-7a2c-8e51-7f0c2b9d4e11',
  time: TIME,
  endpoint: 'track',
  source_id: 'demo',
  session_id: SESSION,
  event_types: ['purchase'],
  detail: 'validation failed with error: event@properties: /price must be number',
  errors: [failure],
  request: {
    body: {
      source: { id: 'demo' },
      session: { id: SESSION },
      events: [{ type: 'purchase', properties: { price: 'thirteen' } }],
    },
    profile_less: false,
    ip: '203.0.113.7',
  },
};

export const validationFailed = {
  detail: 'validation failed with error: event@properties: /price must be number',
  errors: [failure],
};

export const fieldError = {
  detail: [{ loc: ['body', 'session', 'id'], msg: 'field required', type: 'value_error.missing' }],
};

export const nextCursor = 'eyJ0IjoiMjAyNi0xMS0yM1QyMDoxNjowMS43NDFaIiwiaSI6IjAxYTIwYTBkIn0.c2ln';
