import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import {
  LogController,
  type FastifyHttpOptions,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from 'fastify';
import type { Config } from '../config.js';
import { errors, HttpError } from './errors.js';

/** The HTTP parser's reasons, answered with a JSON error of the catalogue. */
function parserError(code: string | undefined): [number, string, string] {
  if (code === 'HPE_HEADER_OVERFLOW') {
    return [431, 'Request Header Fields Too Large', 'Request headers are too large'];
  }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return [408, 'Request Timeout', 'The request was not received in time'];
  }
  return [400, 'Bad Request', 'Malformed HTTP request'];
}

/**
 * Answers what Node's HTTP server refuses before or while a request is read (headers too large, a
 * malformed request line, a request not received within TRACK_HEADERS_TIMEOUT or
 * TRACK_REQUEST_TIMEOUT) with a JSON error of the catalogue, then closes the connection.
 */
function clientErrorHandler(error: NodeJS.ErrnoException, socket: import('node:net').Socket): void {
  const [status, reason, detail] = parserError(error.code);
  if (!socket.writable) {
    socket.destroy(error);
    return;
  }
  const body = JSON.stringify({ detail });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
  // A client that does not read the answer does not keep the connection.
  socket.setTimeout(5_000, () => socket.destroy());
}

/**
 * One access line per request (docs/api.md#request-ids-and-logs), written when it completes:
 * Fastify's own logging writes one when a request arrives and another when it is answered.
 */
class AccessLog extends LogController {
  constructor() {
    super({ disableRequestLogging: false });
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null, request: FastifyRequest, reply: FastifyReply): void {
    const line = {
      req: { method: request.method, url: request.url, remoteAddress: request.ip },
      res: { statusCode: reply.statusCode },
      responseTime: reply.elapsedTime,
    };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log.info(line, 'request completed');
  }
}

/** Log times as ISO 8601 strings in UTC, in the `time` field of every line. */
const isoTime = () => `,"time":"${new Date().toISOString()}"`;

/** A request id a client may choose: 1 to 128 printable ASCII characters, no spaces. */
const REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/**
 * TRACK_TRUST_PROXY as Fastify's `trustProxy` (docs/api.md#client-address). `true` and a list of
 * addresses and networks are Fastify's own forms. A number is not: Fastify (5.x) answers a hop count
 * with "trust nothing"; the service's N means "the N nearest hops, the socket's peer first, are
 * proxies", which is a function of the hop's position.
 */
export function trustProxyOption(setting: Config['trustProxy']): FastifyServerOptions['trustProxy'] {
  if (typeof setting === 'number') return (_address: string, hop: number) => hop < setting;
  return setting;
}

/** The Fastify server settings of the service: limits, timeouts, request ids, logging, low-level errors. */
export function serverOptions(
  config: Config,
  logger: FastifyServerOptions['logger'],
): FastifyHttpOptions<Server> {
  return {
    logger:
      logger === false
        ? false
        : { level: config.logLevel, timestamp: isoTime, ...(typeof logger === 'object' ? logger : {}) },
    bodyLimit: config.bodyLimit,
    logController: config.accessLog ? new AccessLog() : new LogController({ disableRequestLogging: true }),
    // A client's X-Request-Id is used only when short and printable (it goes into every log line).
    requestIdHeader: false,
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    // Requests arriving while the service shuts down get the catalogue's 503 (src/http/shutdown.ts).
    return503OnClosing: false,
    requestTimeout: config.requestTimeoutSec * 1000,
    keepAliveTimeout: config.idleTimeoutSec * 1000,
    http: {
      headersTimeout: config.headersTimeoutSec * 1000,
      // How often Node checks the request and headers timeouts (30 s by default).
      connectionsCheckingInterval: 1000,
    },
    trustProxy: trustProxyOption(config.trustProxy),
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
