/**
 * The error catalogue: every error the service answers with is built here (contract §8).
 * Each carries its HTTP status and a `detail` (a string, or a list of {loc, msg, type} items).
 */
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

export const errors = {
  unparsableJson: (reason: string) => new HttpError(400, `Request body is not valid JSON: ${reason}`),
  invalid: (loc: (string | number)[], msg: string, type = 'value_error') =>
    new HttpError(422, [{ loc, msg, type }]),
  invalidMany: (items: DetailItem[]) => new HttpError(422, items),
  unknownSource: (id: string) => new HttpError(401, `Invalid event source \`${id}\``),
  sourceDisabled: () => new HttpError(401, 'Event source disabled.'),
  notAuthenticated: () => new HttpError(401, 'Not authenticated', { 'www-authenticate': 'Bearer' }),
  notFound: (what: string, id: string) => new HttpError(404, `${what} \`${id}\` not found`),
  routeNotFound: (method: string, url: string) => new HttpError(404, `Route ${method} ${url} not found`),
  bodyTooLarge: (limit: number) => new HttpError(413, `Request body is larger than ${limit} bytes`),
  tooManyEvents: (limit: number, got: number) =>
    new HttpError(413, `Too many events in one request: ${got} (at most ${limit})`),
  rateLimited: (sourceId: string, perSecond: number) =>
    new HttpError(429, `Rate limit of ${perSecond} requests per second exceeded for source \`${sourceId}\``, {
      'retry-after': '1',
    }),
  storeUnavailable: (retryAfterSec = 1) =>
    new HttpError(503, 'Store unavailable, retry later', { 'retry-after': String(retryAfterSec) }),
  writeQueueFull: (retryAfterSec = 1) =>
    new HttpError(503, 'Write queue full, retry later', { 'retry-after': String(retryAfterSec) }),
  internal: () => new HttpError(500, 'Internal server error'),
};
