/**
 * A real HTTP receiver on 127.0.0.1 for delivery tests: it records every request it gets and answers
 * each as the test says (`behave`), from plain 200s to answers that never come.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  headers: IncomingMessage['headers'];
  raw: string;
  body: { destination: string; events: { id: string; type: string; [key: string]: unknown }[] };
  /** Answered with a 2xx (the request was seen and acknowledged). */
  acknowledged: boolean;
}

/** How to answer one request. */
export type Behaviour =
  | { status: number; headers?: Record<string, string>; body?: string }
  | 'hang'
  | 'close'
  | { slowBytes: number; status: number }
  | { huge: number };

export interface Receiver {
  url: string;
  received: Received[];
  /** Decides each answer (the default answers 200). */
  behave: (request: Received, index: number) => Behaviour;
  /** Ids of the events of acknowledged requests, in the order received (duplicates included). */
  deliveredIds(): string[];
  /** Requests being answered now, by webhook-id (to catch one batch sent twice at once). */
  maxConcurrentSameId: number;
  /** Connections open now. */
  openSockets(): number;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const sockets = new Set<Socket>();
  const inFlight = new Map<string, number>();
  const receiver: Receiver = {
    url: '',
    received: [],
    behave: () => ({ status: 200 }),
    deliveredIds: () =>
      receiver.received.filter((r) => r.acknowledged).flatMap((r) => r.body.events.map((e) => e.id)),
    maxConcurrentSameId: 0,
    openSockets: () => sockets.size,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const id = String(req.headers['webhook-id']);
      const now = (inFlight.get(id) ?? 0) + 1;
      inFlight.set(id, now);
      receiver.maxConcurrentSameId = Math.max(receiver.maxConcurrentSameId, now);
      res.on('close', () => inFlight.set(id, (inFlight.get(id) ?? 1) - 1));
      const received: Received = { headers: req.headers, raw, body: JSON.parse(raw), acknowledged: false };
      const index = receiver.received.push(received) - 1;
      const behaviour = receiver.behave(received, index);
      if (behaviour === 'hang') return;
      if (behaviour === 'close') {
        req.socket.destroy();
        return;
      }
      if ('huge' in behaviour) {
        res.writeHead(500, { 'content-type': 'text/plain' });
        const chunk = Buffer.alloc(64 * 1024, 'x');
        let sent = 0;
        const pump = () => {
          while (sent < behaviour.huge) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        res.on('error', () => undefined);
        pump();
        return;
      }
      if ('slowBytes' in behaviour) {
        const text = `HTTP/1.1 ${behaviour.status} OK\r\ncontent-length: 0\r\n\r\n`;
        let i = 0;
        const timer = setInterval(() => {
          if (i >= text.length || req.socket.destroyed) return clearInterval(timer);
          req.socket.write(text[i++]!);
        }, behaviour.slowBytes);
        return;
      }
      received.acknowledged = behaviour.status >= 200 && behaviour.status < 300;
      res.writeHead(behaviour.status, behaviour.headers ?? {});
      res.end(behaviour.body ?? '');
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  assert.ok(address && typeof address === 'object');
  receiver.url = `http://127.0.0.1:${address.port}/hook`;
  return receiver;
}

/** Asserts the request's Standard Webhooks signature with the reference implementation. */
export function assertSigned(request: Received, secret: string): void {
  const headers = {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature']),
  };
  assert.doesNotThrow(() => new Webhook(secret).verify(request.raw, headers), 'signature verifies');
}

/** Waits until `done()` holds, checking every 20 ms; fails after `ms` (generous: machines are slow). */
export async function until(
  done: () => boolean | Promise<boolean>,
  what: string,
  ms = 30_000,
): Promise<void> {
  const started = Date.now();
  while (!(await done())) {
    if (Date.now() - started > ms) assert.fail(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
