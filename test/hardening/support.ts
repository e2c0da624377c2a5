import http from 'node:http';
/** Shared helpers of the hardening tests (not a test file itself). */
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { expectStatus, type Json, type Service } from '../helpers.js';

export { allEvents, expectStatus, type Json } from '../helpers.js';

export type Loc = (string | number)[];

/** The parts of an HTTP answer the assertions need, from inject or from a real socket. */
export interface Answer {
  status: number;
  contentType: string;
  body: string;
}

export function answerOf(res: LightMyRequestResponse): Answer {
  return { status: res.statusCode, contentType: String(res.headers['content-type'] ?? ''), body: res.body };
}

/**
 * Asserts an error answer of docs/api.md #errors: one of the expected statuses, a JSON body with a `detail`
 * that is a non-empty string or a non-empty list of {loc, msg, type}. With `loc`, some item of the
 * list must end with that field path. Returns the parsed body.
 */
export function assertError(answer: Answer, expected: number | number[], label: string, loc?: Loc): Json {
  const statuses = Array.isArray(expected) ? expected : [expected];
  const context = `${label}: got ${answer.status} ${answer.body.slice(0, 300)}`;
  assert.ok(statuses.includes(answer.status), `expected ${statuses.join(' or ')}; ${context}`);
  assert.match(answer.contentType, /^application\/json/, `content-type ${answer.contentType}; ${context}`);
  let body: Json;
  try {
    body = JSON.parse(answer.body) as Json;
  } catch {
    assert.fail(`body is not JSON; ${context}`);
  }
  assert.ok(body !== null && typeof body === 'object' && 'detail' in body, `no detail; ${context}`);
  const { detail } = body;
  if (typeof detail === 'string') {
    assert.ok(detail.length > 0, `empty detail; ${context}`);
  } else {
    assert.ok(Array.isArray(detail) && detail.length > 0, `detail neither string nor list; ${context}`);
    for (const item of detail as Json[]) {
      assert.ok(Array.isArray(item.loc), `loc is not a list; ${context}`);
      assert.equal(typeof item.msg, 'string', context);
      assert.equal(typeof item.type, 'string', context);
    }
  }
  if (loc) {
    assert.ok(Array.isArray(detail), `detail should list fields; ${context}`);
    const wanted = JSON.stringify(loc);
    const found = (detail as Json[]).some((item) => {
      const got = item.loc as Loc;
      return JSON.stringify(got.slice(Math.max(0, got.length - loc.length))) === wanted;
    });
    assert.ok(found, `no detail item for ${loc.join('.')}; ${context}`);
  }
  return body;
}

/** A valid tracker payload for the source `src-1` with its own session. */
export function validPayload(sessionId: string, extra: Json = {}): Json {
  return {
    source: { id: 'src-1' },
    session: { id: sessionId },
    events: [{ type: 'page-view', properties: { path: '/' } }],
    ...extra,
  };
}

/** How many stored events match the query (up to 1000: one page). */
export async function countEvents(service: Service, query = ''): Promise<number> {
  const res = await service.get(`/events?limit=1000${query ? `&${query}` : ''}`);
  const body = expectStatus(res, 200, 'GET /events');
  return (body.result as Json[]).length;
}

/** Snapshot of the own keys of the built-in prototypes, to detect pollution. */
export function prototypeKeys(): string {
  return JSON.stringify(
    [Object.prototype, Array.prototype, Function.prototype, String.prototype].map((p) =>
      Reflect.ownKeys(p).map(String).sort(),
    ),
  );
}

export interface RawRequest {
  method?: string;
  path: string;
  headers?: Record<string, string | number>;
  body?: string | Buffer;
  /** Sent with chunked transfer encoding (no Content-Length), one write per chunk. */
  chunks?: Buffer[];
}

/** One request through a real socket (no client-side limits), answered as an Answer. */
export function sendRaw(port: number, request: RawRequest): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: request.method ?? 'POST',
        path: request.path,
        headers: request.headers,
        agent: false,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType: String(res.headers['content-type'] ?? ''),
            body,
          }),
        );
      },
    );
    req.setTimeout(30_000, () => req.destroy(new Error(`timeout: ${request.path}`)));
    // The server may answer 413 and close before the whole body is written: that is not a failure.
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE' && error.code !== 'ECONNRESET') reject(error);
    });
    if (request.chunks) {
      for (const chunk of request.chunks) req.write(chunk);
      req.end();
    } else req.end(request.body);
  });
}
