import type { FastifyInstance } from 'fastify';
import { errors } from '../errors.js';

const QUOTE = 34;
const BACKSLASH = 92;

/**
 * One pass over the raw text, outside strings: is the nesting deeper than `maxDepth` (the body itself
 * is level 1), and could a number overflow to a non-finite value (an exponent, or 300+ digits)?
 * Done before JSON.parse so that hostile nesting never reaches the parser's recursion.
 */
export function scanJson(text: string, maxDepth: number): { tooDeep: boolean; maybeNonFinite: boolean } {
  let depth = 0;
  let digits = 0;
  let maybeNonFinite = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === BACKSLASH) i++;
        else if (d === QUOTE) break;
      }
      digits = 0;
    } else if (c === 123 || c === 91) {
      if (++depth > maxDepth) return { tooDeep: true, maybeNonFinite };
    } else if (c === 125 || c === 93) {
      depth--;
    } else if (c >= 48 && c <= 57) {
      if (++digits > 300) maybeNonFinite = true;
    } else if ((c === 101 || c === 69) && digits > 0) {
      maybeNonFinite = true;
    } else if (c !== 46) {
      digits = 0;
    }
  }
  return { tooDeep: false, maybeNonFinite };
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

/** Parses a JSON body with the rules of contract §2 into a value, or throws the catalogue error. */
export function parseJsonBody(text: string, maxDepth: number): unknown {
  if (text.trim() === '') return undefined;
  const scan = scanJson(text, maxDepth);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw errors.unparsableJson((error as Error).message);
  }
  if (scan.tooDeep)
    throw errors.invalid(['body'], `nesting is deeper than ${maxDepth} levels`, 'value_error.depth');
  if (scan.maybeNonFinite) {
    const path = findNonFinite(value);
    if (path)
      throw errors.invalid(['body', ...path], 'number is not finite', 'value_error.number.not_finite');
  }
  return value;
}

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
