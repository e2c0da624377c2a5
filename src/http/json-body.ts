import type { FastifyInstance } from 'fastify';
import { errors } from './errors.js';

/**
 * One walk over a parsed body (iterative, so hostile nesting cannot exhaust the stack): is it nested
 * deeper than `maxDepth` (the body itself being level 1), and does it hold a number that is not
 * finite (`1e400` parses to Infinity)?
 */
export function inspectParsed(value: unknown, maxDepth: number): { tooDeep: boolean; nonFinite: boolean } {
  let nonFinite = typeof value === 'number' && !Number.isFinite(value);
  if (value === null || typeof value !== 'object') return { tooDeep: false, nonFinite };
  const nodes: object[] = [value];
  const depths: number[] = [1];
  while (nodes.length > 0) {
    const node = nodes.pop() as Record<string, unknown>;
    const depth = depths.pop()!;
    if (depth > maxDepth) return { tooDeep: true, nonFinite };
    for (const key in node) {
      const child = node[key];
      if (typeof child === 'object') {
        if (child === null) continue;
        nodes.push(child);
        depths.push(depth + 1);
      } else if (typeof child === 'number' && child - child !== 0) nonFinite = true;
    }
  }
  return { tooDeep: false, nonFinite };
}

/** Path of the first number in `value` that is not finite, or null. Iterative: no recursion limit. */
export function findNonFinite(value: unknown): (string | number)[] | null {
  const stack: [unknown, (string | number)[]][] = [[value, []]];
  while (stack.length > 0) {
    const [current, path] = stack.pop()!;
    if (typeof current === 'number') {
      if (!Number.isFinite(current)) return path;
    } else if (Array.isArray(current)) {
      current.forEach((item, i) => stack.push([item, [...path, i]]));
    } else if (current !== null && typeof current === 'object') {
      for (const key of Object.keys(current))
        stack.push([(current as Record<string, unknown>)[key], [...path, key]]);
    }
  }
  return null;
}

/**
 * Parses a JSON body with the rules of docs/api.md#json-bodies into a value, or throws the catalogue error.
 * V8's JSON.parse does not recurse, so a hostile nesting is parsed first and refused after.
 */
export function parseJsonBody(text: string, maxDepth: number): unknown {
  if (BLANK.test(text)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw errors.unparsableJson((error as Error).message);
  }
  const found = inspectParsed(value, maxDepth);
  if (found.tooDeep)
    throw errors.invalid(['body'], `nesting is deeper than ${maxDepth} levels`, 'value_error.depth');
  if (found.nonFinite) {
    const path = findNonFinite(value) ?? [];
    throw errors.invalid(['body', ...path], 'number is not finite', 'value_error.number.not_finite');
  }
  return value;
}

const BLANK = /^\s*$/;

// A JSON text is UTF-8 (RFC 8259): invalid bytes make the body unparsable instead of being replaced.
const utf8 = new TextDecoder('utf-8', { fatal: true });
// A media type as Fastify can read it; anything else is dropped so that the body is still read as JSON.
const MEDIA_TYPE = /^\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+\/[!#$%&'*+.^_`|~0-9A-Za-z-]+\s*(;.*)?$/;

/** Every request body is read as JSON, whatever its Content-Type (Tracardi's clients send none). */
export function registerJsonBody(app: FastifyInstance, maxDepth: number): void {
  app.removeAllContentTypeParsers();
  app.addHook('onRequest', (request, _reply, done) => {
    const type = request.headers['content-type'];
    if (type !== undefined && !MEDIA_TYPE.test(type)) delete request.headers['content-type'];
    done();
  });
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => {
    let text: string;
    try {
      text = utf8.decode(body as Buffer);
    } catch {
      done(errors.unparsableJson('the body is not valid UTF-8'), undefined);
      return;
    }
    try {
      done(null, parseJsonBody(text, maxDepth));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
}
