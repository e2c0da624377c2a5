import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { DetailItem } from './errors.js';
import { errors, fromDomain, HttpError } from './errors.js';

interface AjvError {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
}

function detailOf(context: string, e: AjvError): DetailItem {
  const loc: (string | number)[] = [context];
  for (const part of e.instancePath.split('/').slice(1)) {
    const key = part.replace(/~1/g, '/').replace(/~0/g, '~');
    loc.push(/^\d+$/.test(key) ? Number(key) : key);
  }
  if (e.keyword === 'required') {
    loc.push(String(e.params.missingProperty));
    return { loc, msg: 'field required', type: 'value_error.missing' };
  }
  return { loc, msg: e.message ?? 'is invalid', type: `value_error.${e.keyword}` };
}

/** Maps anything thrown while handling a request to the catalogue (docs/api.md#errors). */
export function toHttpError(error: FastifyError, bodyLimit: number): HttpError {
  const known = fromDomain(error);
  if (known) return known;
  if (error.validation) {
    const context = error.validationContext ?? 'body';
    return errors.invalidMany((error.validation as unknown as AjvError[]).map((e) => detailOf(context, e)));
  }
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return errors.bodyTooLarge(bodyLimit);
  const status = error.statusCode;
  if (status !== undefined && status >= 400 && status < 500) return new HttpError(status, error.message);
  return errors.internal();
}

export function errorHandler(bodyLimit: number) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const http = toHttpError(error, bodyLimit);
    if (http.statusCode >= 500) request.log.error({ err: error }, 'request failed');
    else
      request.log.info(
        { status: http.statusCode, detail: http.detail, url: request.url },
        'request rejected',
      );
    return reply.code(http.statusCode).headers(http.headers).send(http.body());
  };
}
