/** Shared helpers of the HTTP route tests (not a test file itself). */
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { expectStatus, type Json, type Service } from '../helpers.js';

export { allEvents, expectStatus, type Json } from '../helpers.js';

/**
 * Asserts an error response of docs/api.md #errors: the status, a JSON body with `detail` that is a string
 * or a list of {loc, msg, type}. Returns the detail.
 */
export function expectError(res: LightMyRequestResponse, status: number): string | Json[] {
  const body = expectStatus(res, status);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  assert.ok('detail' in body, `no detail in ${res.body}`);
  const { detail } = body;
  if (typeof detail === 'string') {
    assert.ok(detail.length > 0, 'detail is empty');
  } else {
    assert.ok(
      Array.isArray(detail) && detail.length > 0,
      `detail is neither a string nor a list: ${res.body}`,
    );
    for (const item of detail as Json[]) {
      assert.ok(Array.isArray(item.loc), `loc is not a list: ${JSON.stringify(item)}`);
      assert.equal(typeof item.msg, 'string');
      assert.equal(typeof item.type, 'string');
    }
  }
  return detail as string | Json[];
}

/** Asserts a 422 whose detail names the given field path (as a `loc` ending with it). */
export function expectFieldError(res: LightMyRequestResponse, path: (string | number)[]): void {
  const detail = expectError(res, 422);
  assert.ok(Array.isArray(detail), `detail should list fields: ${res.body}`);
  const found = detail.some((item) => {
    const loc = item.loc as (string | number)[];
    return JSON.stringify(loc.slice(loc.length - path.length)) === JSON.stringify(path);
  });
  assert.ok(found, `no detail item for ${path.join('.')}: ${res.body}`);
}

/** POST /track (optionally profile-less) that must answer 200; returns the response body. */
export async function track(service: Service, body: unknown, query = ''): Promise<Json> {
  return expectStatus(await service.post(`/track${query}`, body), 200);
}

/** A management GET that must answer 200. */
export async function read(service: Service, url: string): Promise<Json> {
  return expectStatus(await service.get(url), 200);
}

/** Status of a management GET (for records that must be gone). */
export async function statusOf(service: Service, url: string): Promise<number> {
  return (await service.get(url)).statusCode;
}

/** A tracker payload with a fresh session and the given events (types). */
export function events(...types: string[]): Json[] {
  return types.map((type, i) => ({ type, properties: { n: i } }));
}

export const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** Runs `task` with an ISO time taken before and after it, to check a stored time lies between. */
export async function timed<T>(task: () => Promise<T>): Promise<{ value: T; before: string; after: string }> {
  const before = new Date().toISOString();
  const value = await task();
  const after = new Date().toISOString();
  return { value, before, after };
}
