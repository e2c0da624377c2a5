/**
 * The error catalogue (docs/api.md#errors): every error the service answers with is built here, and
 * `toHttpError` is the one place that maps the pipeline's and the store's errors to status codes.
 * Each carries its HTTP status and a `detail` (a string, or a list of {loc, msg, type} items).
 */
import {
  Conflict,
  InvalidRecord,
  RateLimited,
  SourceDisabled,
  UnknownSource,
  ValidationFailed,
} from '../domain/errors.js';
import { StoreUnavailableError, WriteQueueFullError } from '../storage/store.js';

export interface DetailItem {
  loc: (string | number)[];
  msg: string;
  type: string;
}

export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly detail: string | DetailItem[],
    readonly headers: Record<string, string> = {},
    readonly extra: Record<string, unknown> = {},
  ) {
    super(typeof detail === 'string' ? detail : detail.map((d) => `${d.loc.join('.')}: ${d.msg}`).join('; '));
  }

  body(): Record<string, unknown> {
    return { detail: this.detail, ...this.extra };
  }
}

const retryAfter = (seconds: number) => ({ 'retry-after': String(seconds) });

export const errors = {
  unparsableJson: (reason: string) => new HttpError(400, `Request body is not valid JSON: ${reason}`),
  undecodableBody: (encoding: string, reason: string) =>
    new HttpError(400, `Request body is not valid ${encoding}: ${reason}`),
  unsupportedEncoding: (encoding: string) =>
    new HttpError(415, `Content-Encoding \`${encoding}\` is not supported: use gzip, deflate or none`),
  malformedUrl: () => new HttpError(400, 'Malformed URL'),
  invalid: (loc: (string | number)[], msg: string, type = 'value_error') =>
    new HttpError(422, [{ loc, msg, type }]),
  invalidMany: (items: DetailItem[]) => new HttpError(422, items),
  notAuthenticated: () => new HttpError(401, 'Not authenticated', { 'www-authenticate': 'Bearer' }),
  notFound: (what: string, id: string) => new HttpError(404, `${what} \`${id}\` not found`),
  routeNotFound: (method: string, url: string) => new HttpError(404, `Route ${method} ${url} not found`),
  bodyTooLarge: (limit: number) => new HttpError(413, `Request body is larger than ${limit} bytes`),
  tooManyEvents: (limit: number, got: number) =>
    new HttpError(413, `Too many events in one request: ${got} (at most ${limit})`),
  storeUnavailable: (retryAfterSec = 1) =>
    new HttpError(503, 'Store unavailable, retry later', retryAfter(retryAfterSec)),
  writeQueueFull: (retryAfterSec = 1) =>
    new HttpError(503, 'Write queue full, retry later', retryAfter(retryAfterSec)),
  shuttingDown: (retryAfterSec = 1) =>
    new HttpError(503, 'The service is shutting down, retry later', {
      ...retryAfter(retryAfterSec),
      connection: 'close',
    }),
  internal: () => new HttpError(500, 'Internal server error'),
};

/** The catalogue error of a pipeline or store error; null for anything else (a fault: 500). */
export function fromDomain(error: unknown): HttpError | null {
  if (error instanceof HttpError) return error;
  if (error instanceof UnknownSource || error instanceof SourceDisabled) {
    return new HttpError(401, error.message);
  }
  if (error instanceof RateLimited) return new HttpError(429, error.message, retryAfter(1));
  if (error instanceof ValidationFailed) {
    return new HttpError(406, error.message, {}, { errors: error.failures });
  }
  if (error instanceof InvalidRecord) {
    return errors.invalidMany(
      error.problems.map((p) => ({ loc: ['body', ...p.field], msg: p.msg, type: p.type })),
    );
  }
  if (error instanceof Conflict || error instanceof StoreUnavailableError) return errors.storeUnavailable();
  if (error instanceof WriteQueueFullError) return errors.writeQueueFull();
  return null;
}
