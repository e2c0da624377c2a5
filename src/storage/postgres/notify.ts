import pg from 'pg';
import type { StoreChange } from '../store.js';
import { clientConfig, type ConnectionOptions } from './connection.js';

/**
 * Change notifications between the processes sharing one database (LISTEN/NOTIFY).
 *
 * Every statement that writes an event source, an event type, a profile rule or a destination also
 * sends, in the same statement (so at its commit, and only if it commits), `pg_notify` on one channel
 * with the JSON payload `{"schema": current_schema(), "kind": "source" | "event_type" |
 * "profile_rule" | "destination", "id": …}` (for a profile rule, `id` is the event type whose rules
 * changed). Each process holds one
 * dedicated connection that LISTENs and hands the changes of its own schema to the subscribers.
 * PostgreSQL delivers a notification only after the commit, so a cache entry reloaded after it
 * sees the change.
 *
 * Notifications are lost while the connection is down: after every (re)connection the subscribers
 * get `id: null` for every kind (forget everything), and the TTLs of the caches remain the bound
 * whatever happens.
 */
export const CHANNEL = 'event_collector_changes';

/** PostgreSQL refuses payloads of 8000 bytes or more; a longer one names the kind only. */
const MAX_PAYLOAD = 7900;

/**
 * A SELECT announcing each row of `relation` (a name from the statement's WITH list with an `id`
 * column), one row per announcement; `columns` are selected before it (`previous, `).
 */
export function announcingRows(kind: StoreChange['kind'], relation: string, columns = ''): string {
  const base = `'schema', current_schema(), 'kind', '${kind}'`;
  return `SELECT ${columns}pg_notify('${CHANNEL}', CASE WHEN octet_length(text) < ${MAX_PAYLOAD} THEN text
      ELSE json_build_object(${base})::text END)
    FROM (SELECT *, json_build_object(${base}, 'id', id)::text AS text FROM ${relation}) payload`;
}

/**
 * The write `write` (an INSERT/UPDATE/DELETE without RETURNING) as one statement that also announces
 * each row it wrote; it answers one row per written row, so `rowCount` is what the write counted.
 */
export function announcing(kind: StoreChange['kind'], write: string, idColumn: string): string {
  return `WITH changed AS (${write} RETURNING ${idColumn} AS id) ${announcingRows(kind, 'changed')}`;
}

/** The statement that announces a change of the record `$1` (short ids only) inside a transaction. */
export function announce(kind: StoreChange['kind']): string {
  return `SELECT pg_notify('${CHANNEL}', json_build_object('schema', current_schema(), 'kind', '${kind}', 'id', $1::text)::text)`;
}

/** First wait before reconnecting; it doubles after each failure up to RETRY_MAX_MS. */
const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5000;
/** The listening connection is checked this often, so that a silently dead one is replaced. */
const HEARTBEAT_MS = 15_000;
/** Longest wait for the answer of that check. */
const HEARTBEAT_TIMEOUT_MS = 5000;

const ignore = () => undefined;

const KINDS: StoreChange['kind'][] = ['source', 'event_type', 'profile_rule', 'destination'];

type Listener = (change: StoreChange) => void;

/** One LISTEN connection per store, opened while there are subscribers, reconnecting with backoff. */
export class ChangeFeed {
  private readonly listeners = new Set<Listener>();
  private client: pg.Client | null = null;
  private schema: string | null = null;
  /** Bumped whenever the current connection is abandoned: events of older ones are ignored. */
  private generation = 0;
  private failures = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  private heartbeat: NodeJS.Timeout | null = null;

  constructor(private readonly connection: ConnectionOptions) {}

  /** True while the LISTEN connection is established (for tests and diagnostics). */
  get listening(): boolean {
    return this.client !== null && this.heartbeat !== null;
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    if (this.client === null && this.retryTimer === null) void this.connect();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.disconnect();
    };
  }

  /** Drops every subscriber and closes the connection: no reconnection, no more deliveries. */
  async stop(): Promise<void> {
    this.listeners.clear();
    await this.disconnect();
  }

  private async connect(): Promise<void> {
    const generation = ++this.generation;
    const client = new pg.Client({ ...clientConfig(this.connection), query_timeout: HEARTBEAT_TIMEOUT_MS });
    this.client = client;
    const lost = () => {
      if (generation !== this.generation) return;
      void this.disconnect();
      this.retry();
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', (message) => {
      if (generation === this.generation) this.deliver(message.payload);
    });
    try {
      await client.connect();
      const { rows } = await client.query<{ schema: string | null }>('SELECT current_schema() AS schema');
      this.schema = rows[0]?.schema ?? null;
      await client.query(`LISTEN ${CHANNEL}`);
    } catch {
      if (generation === this.generation) lost();
      else client.end().catch(ignore);
      return;
    }
    if (generation !== this.generation) {
      // Abandoned (unsubscribed or stopped) while connecting.
      client.end().catch(ignore);
      return;
    }
    this.failures = 0;
    this.heartbeat = setInterval(() => {
      client.query('SELECT 1').catch(lost);
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
    // Whatever changed before LISTEN took effect was not announced to this connection.
    for (const kind of KINDS) this.emit({ kind, id: null });
  }

  private retry(): void {
    if (this.listeners.size === 0 || this.retryTimer !== null) return;
    const ceiling = Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** this.failures);
    this.failures++;
    // Jitter: the processes of a fleet do not all reconnect at the same moment.
    this.retryTimer = setTimeout(
      () => {
        this.retryTimer = null;
        if (this.listeners.size > 0 && this.client === null) void this.connect();
      },
      ceiling / 2 + Math.random() * (ceiling / 2),
    );
    this.retryTimer.unref();
  }

  /** Abandons the current connection (if any) and any planned reconnection. */
  private async disconnect(): Promise<void> {
    this.generation++;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const client = this.client;
    this.client = null;
    if (!client) return;
    let timer: NodeJS.Timeout | undefined;
    // end() destroys a broken socket at once; a healthy one says goodbye first, briefly.
    await Promise.race([
      client.end().catch(ignore),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, 1000);
        timer.unref();
      }),
    ]);
    clearTimeout(timer);
  }

  private deliver(payload: string | undefined): void {
    let message: { schema?: unknown; kind?: unknown; id?: unknown };
    try {
      message = JSON.parse(payload ?? '') as typeof message;
    } catch {
      return;
    }
    if (message === null || typeof message !== 'object' || message.schema !== this.schema) return;
    const kind = KINDS.find((k) => k === message.kind);
    if (kind === undefined) return;
    // An id with U+FFFD may stand for one written with U+0000 (see `storable`): forget the kind.
    const id = typeof message.id === 'string' && !message.id.includes('\uFFFD') ? message.id : null;
    this.emit({ kind, id });
  }

  private emit(change: StoreChange): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(change);
      } catch {
        // A subscriber's mistake must not stop the others or the connection.
      }
    }
  }
}
