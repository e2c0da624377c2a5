/**
 * The port through which the service calls other systems: one HTTP request out, one outcome back.
 * The delivery pipeline (src/domain/delivery) uses it; http-sender.ts implements it.
 */

export interface OutboundRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** The whole exchange, answer included, must end within this. */
  timeoutMs: number;
}

export type SendResult =
  /** The receiver answered: its status, its Retry-After, and the start of its body (for errors). */
  | { kind: 'response'; status: number; retryAfter: string | null; text: string }
  /** No answer: a connection, name resolution or protocol failure, or the timeout. */
  | { kind: 'error'; message: string };

export interface Sender {
  send(request: OutboundRequest): Promise<SendResult>;
  /** Closes idle connections (the service stopping). */
  close(): void;
}
