import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../src/app.js';
import { defaultConfig } from '../src/config.js';
import type { AppConfig } from '../src/services.js';
import { lockDataDir } from '../src/storage/sqlite/connection.js';
import type { Store } from '../src/storage/store.js';

/** A JSON body as the tests read it. */
export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export const TOKEN = 'test-token';
export const AUTH = { authorization: `Bearer ${TOKEN}` };

export interface Service {
  app: FastifyInstance;
  config: AppConfig;
  dataDir: string;
  /** POST with a JSON body (a string is sent as it is). */
  post(url: string, body?: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  /** GET with the management token. */
  get(url: string): Promise<LightMyRequestResponse>;
  /** Management request with the token. */
  manage(method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown): Promise<LightMyRequestResponse>;
  /** Creates an event source (enabled by default) and returns its record. */
  createSource(input?: Record<string, unknown>): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

export function tempDir(prefix = 'collector-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Builds the real app on a fresh data folder (or the given one) with the embedded store by default. */
export async function startService(
  overrides: Partial<AppConfig> = {},
  options: { store?: Store; keepDataDir?: boolean; lockDataDir?: boolean } = {},
): Promise<Service> {
  const dataDir = overrides.dataDir ?? tempDir();
  // As src/server.ts does: the embedded store then knows that no other process writes it. By
  // default on a fresh folder; tests that open a folder twice (another process) go without.
  const lock = options.lockDataDir ?? overrides.dataDir === undefined;
  const release = lock ? lockDataDir(dataDir) : () => undefined;
  const config: AppConfig = {
    ...defaultConfig({ dataDir, logLevel: 'silent' }),
    apiToken: TOKEN,
    ...overrides,
  };
  let app: FastifyInstance;
  try {
    app = await buildApp({ config, store: options.store, logger: false });
  } catch (error) {
    release();
    throw error;
  }
  const inject = (
    method: 'GET' | 'POST' | 'DELETE',
    url: string,
    body: unknown,
    headers: Record<string, string>,
  ) =>
    app.inject({
      method,
      url,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      payload: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
  return {
    app,
    config,
    dataDir,
    post: (url, body, headers = {}) => inject('POST', url, body, headers),
    get: (url) => inject('GET', url, undefined, AUTH),
    manage: (method, url, body) => inject(method, url, body, AUTH),
    async createSource(input = {}) {
      const res = await inject('POST', '/event-source', { id: 'src-1', name: 'Test', ...input }, AUTH);
      if (res.statusCode !== 200) throw new Error(`createSource: ${res.statusCode} ${res.body}`);
      return res.json();
    },
    async close() {
      await app.close();
      release();
      if (!options.keepDataDir && overrides.dataDir === undefined)
        rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A minimal valid tracker payload. */
export function payload(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    source: { id: 'src-1' },
    session: { id: `session-${Math.random().toString(36).slice(2)}` },
    events: [{ type: 'page-view', properties: { path: '/' } }],
    ...overrides,
  };
}

/** Parses a response body, asserting the status first (with the body in the message). */
export function expectStatus(res: LightMyRequestResponse, status: number, label = ''): Json {
  const context = label ? `${label}: ` : '';
  assert.equal(
    res.statusCode,
    status,
    `${context}expected ${status}, got ${res.statusCode}: ${res.body.slice(0, 500)}`,
  );
  return res.body === '' ? {} : (res.json() as Json);
}

/** Every stored event matching the query, through all pages of GET /events. */
export async function allEvents(service: Service, query: Record<string, string> = {}): Promise<Json[]> {
  const events: Json[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 10_000; pages++) {
    const params = new URLSearchParams({ limit: '1000', ...query });
    if (cursor) params.set('cursor', cursor);
    const page = expectStatus(await service.get(`/events?${params}`), 200, 'GET /events');
    events.push(...(page.result as Json[]));
    cursor = page.next as string | null;
    if (!cursor) return events;
  }
  throw new Error('too many pages');
}
