/**
 * The Sender of the service over Node's HTTP client: keep-alive connections, no redirects followed
 * (a 3xx is an answer like any other), a time limit on the whole exchange, and at most
 * MAX_BODY_BYTES of an answer read: the rest is dropped with the connection.
 */
import http from 'node:http';
import https from 'node:https';
import type { OutboundRequest, SendResult, Sender } from './sender.js';

const MAX_BODY_BYTES = 64 * 1024;
/** The start of an answer's body kept for its error message. */
const TEXT_CHARS = 200;

export class HttpSender implements Sender {
  private readonly agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 16 }),
    'https:': new https.Agent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 16 }),
  };

  send(request: OutboundRequest): Promise<SendResult> {
    let target: URL;
    try {
      target = new URL(request.url);
    } catch {
      return Promise.resolve({ kind: 'error', message: 'the URL does not parse' });
    }
    const agent =
      target.protocol === 'https:'
        ? this.agents['https:']
        : target.protocol === 'http:'
          ? this.agents['http:']
          : null;
    if (!agent) return Promise.resolve({ kind: 'error', message: 'the URL is not http(s)' });
    const client = target.protocol === 'https:' ? https : http;
    return new Promise((resolve) => {
      let settled = false;
      const finish = (result: SendResult) => {
        if (settled) return;
        settled = true;
        resolve(result);
      };
      // Once the status has come, the timeout ends the reading of the body, with that status.
      let answered: SendResult | null = null;
      const body = Buffer.from(request.body, 'utf8');
      const req = client.request(target, {
        method: 'POST',
        agent,
        headers: { ...request.headers, 'content-length': String(body.length) },
      });
      const timer = setTimeout(() => {
        finish(answered ?? { kind: 'error', message: `no answer within ${request.timeoutMs / 1000} s` });
        req.destroy();
      }, request.timeoutMs);
      timer.unref();
      req.on('error', (error: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        finish({ kind: 'error', message: error.message || error.code || 'connection failed' });
      });
      req.on('response', (res) => {
        const status = res.statusCode ?? 0;
        const header = res.headers['retry-after'];
        const retryAfter = Array.isArray(header) ? (header[0] ?? null) : (header ?? null);
        const answer = (text: string): SendResult => ({ kind: 'response', status, retryAfter, text });
        // A success needs nothing of the body: answer at once, then drop what comes, within bounds.
        answered = answer('');
        if (status >= 200 && status < 300) finish(answered);
        let text = '';
        let bytes = 0;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (text.length < TEXT_CHARS) text += chunk.toString('utf8').slice(0, TEXT_CHARS - text.length);
          answered = answer(text);
          if (bytes > MAX_BODY_BYTES) {
            clearTimeout(timer);
            finish(answer(text));
            res.destroy();
          }
        });
        res.on('end', () => {
          clearTimeout(timer);
          finish(answer(text));
        });
        res.on('error', () => {
          clearTimeout(timer);
          finish(answer(text));
        });
      });
      req.end(body);
    });
  }

  close(): void {
    this.agents['http:'].destroy();
    this.agents['https:'].destroy();
  }
}
