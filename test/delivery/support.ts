/** Shared helpers of the delivery tests (not a test file itself). */
import type { TestContext } from 'node:test';
import { expectStatus, startService, type Json, type Service } from '../helpers.js';
import type { AppConfig } from '../../src/services.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { testSchema } from '../support/postgres.js';

export { until, assertSigned, type Receiver } from '../support/receiver.js';

/** Settings that keep the retries of a test short. */
export const quick: Partial<AppConfig> = {
  deliveryBackoffMinMs: 50,
  deliveryBackoffMaxMs: 400,
  deliveryTimeoutMs: 2000,
};

/** The two stores the delivery tests run on; PostgreSQL gets a schema of its own per service. */
export const STORES: [string, () => Promise<Partial<AppConfig>>][] = [
  ['sqlite', async () => ({})],
  ['postgres', async () => ({ databaseUrl: await testSchema() })],
];

export async function setUp(
  t: TestContext,
  storeConfig: () => Promise<Partial<AppConfig>>,
  overrides: Partial<AppConfig> = {},
): Promise<{ service: Service; receiver: Receiver }> {
  const receiver = await startReceiver();
  const service = await startService({ ...(await storeConfig()), ...quick, ...overrides });
  t.after(async () => {
    await service.close();
    await receiver.close();
  });
  await service.createSource({ id: 'web' });
  await service.createSource({ id: 'app' });
  return { service, receiver };
}

export async function createDestination(service: Service, body: Json): Promise<Json> {
  return expectStatus(await service.manage('POST', '/destination', body), 200, 'POST /destination');
}

/** Sends one /track request of `types` for `session` and returns the stored event ids, in order. */
export async function trackEvents(
  service: Service,
  types: string[],
  session = `s-${Math.random().toString(36).slice(2)}`,
  source = 'web',
): Promise<string[]> {
  const res = await service.post('/track', {
    source: { id: source },
    session: { id: session },
    options: { debugger: true },
    events: types.map((type, i) => ({ type, properties: { i } })),
  });
  return expectStatus(res, 200, 'POST /track').debugging.events.ids as string[];
}

export async function status(service: Service, id: string): Promise<Json> {
  return expectStatus(await service.get(`/destination/${id}`), 200).status as Json;
}
