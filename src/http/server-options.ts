import { randomUUID } from 'node:crypto';
import { LogController, type FastifyReply, type FastifyServerOptions } from 'fastify';
import type { Config } from '../config.js';
import { errors, HttpError } from './errors.js';

/**
 * Answers what Node's HTTP parser refuses before a request exists (headers too large, a malformed
 * request line) with a JSON error of the catalogue, then closes the connection.
 */
function clientErrorHandler(error: NodeJS.ErrnoException, socket: import('node:net').Socket): void {
  const [status, reason, detail] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', 'Request headers are too large']
      : [400, 'Bad Request', 'Malformed HTTP request'];
  if (!socket.writable) {
    socket.destroy(error);
    return;
  }
  const body = JSON.stringify({ detail });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/** A request id a client may choose: 1 to 128 printable ASCII characters, no spaces. */
const REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/** The Fastify server settings of the service: limits, request ids, logging, low-level errors. */
export function serverOptions(config: Config, logger: FastifyServerOptions['logger']): FastifyServerOptions {
  return {
    logger: logger ?? { level: config.logLevel },
    bodyLimit: config.bodyLimit,
    logController: new LogController({ disableRequestLogging: !config.accessLog }),
    // A client's X-Request-Id is used only when short and printable (it goes into every log line).
    requestIdHeader: false,
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    return503OnClosing: true,
    // Path parameters always reach their route, whose schema refuses what is too long (422).
    routerOptions: { maxParamLength: 4096 },
    clientErrorHandler,
    frameworkErrors: (error, _request, reply) => {
      const http =
        error.code === 'FST_ERR_BAD_URL' ? errors.malformedUrl() : new HttpError(400, error.message);
      return (reply as FastifyReply).code(http.statusCode).send(http.body());
    },
  };
}
