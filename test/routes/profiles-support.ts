/** Shared helpers of the profile tests (not a test file itself): both stores, rules, tracking. */
import { payload, startService, type Json, type Service } from '../helpers.js';
import { testSchema } from '../support/postgres.js';
import { expectStatus } from './support.js';

export const STORES = ['sqlite', 'postgres'] as const;
export type StoreName = (typeof STORES)[number];

/** The real app on a fresh embedded store, or on a fresh PostgreSQL schema (usePostgres() first). */
export async function startOn(store: StoreName, overrides: Parameters<typeof startService>[0] = {}) {
  const service =
    store === 'sqlite'
      ? await startService(overrides)
      : await startService({ ...overrides, databaseUrl: await testSchema() });
  await service.createSource();
  return service;
}

/** Saves a rule that must be accepted; returns the stored record. */
export async function rule(service: Service, body: Json): Promise<Json> {
  return expectStatus(await service.manage('POST', '/profile-rule', body), 200, 'POST /profile-rule');
}

/** POST /track with the debugger on, that must answer 200. */
export async function send(service: Service, body: Json): Promise<Json> {
  const options = { debugger: true, ...(body.options as Json | undefined) };
  return expectStatus(await service.post('/track', payload({ ...body, options })), 200, 'POST /track');
}

/** One event of a type with properties, on a session (a fresh one by default), for a profile. */
export function event(type: string, properties: Json = {}, extra: Json = {}): Json {
  return { events: [{ type, properties }], ...extra };
}

export async function profileOf(service: Service, id: string): Promise<Json> {
  return expectStatus(await service.get(`/profile/${id}`), 200, `GET /profile/${id}`);
}

/** Sends events of one visitor: the first call creates the profile, later ones continue it. */
export function visitor(service: Service) {
  const session = `v-${Math.random().toString(36).slice(2)}`;
  let profileId: string | undefined;
  return {
    get id() {
      return profileId!;
    },
    session,
    async send(type: string, properties: Json = {}, extra: Json = {}): Promise<Json> {
      const answer = await send(service, { session: { id: session }, ...event(type, properties, extra) });
      profileId = answer.profile.id;
      return answer;
    },
    profile: () => profileOf(service, profileId!),
  };
}
