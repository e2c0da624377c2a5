import { isIP } from 'node:net';
/**
 * Typed configuration. `loadConfig` turns environment variables (docs/api.md#settings) into a frozen object;
 * only `src/server.ts` calls it with `process.env`. Tests build a Config with `defaultConfig()`.
 * Long because every setting is declared, parsed and checked here, in one place.
 */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  /** Bearer token of the management API; undefined means "generate one into dataDir". */
  apiToken: string | undefined;
  /** Seconds a validation schema may stay cached; 0 disables the cache. */
  validatorTtlSec: number;
  /** Seconds an event source may stay cached (a disable takes effect on other processes within it). */
  sourceTtlSec: number;
  bodyLimit: number;
  maxEvents: number;
  maxDepth: number;
  /** When false, `options.debugger` is ignored. */
  debug: boolean;
  /** `normal` survives a process crash; `full` also survives power loss (fsync per commit). */
  sync: 'normal' | 'full';
  /** Default requests per second per event source (per process); 0 = unlimited. */
  rateLimit: number;
  /** Requests per second per client address (per process), whatever the source; 0 = unlimited. */
  clientRateLimit: number;
  /** Most write sets waiting for a commit; past it requests get 503 with Retry-After. */
  writeQueueLimit: number;
  /** Rejected requests older than this many days are deleted from the quarantine. */
  rejectedMaxAgeDays: number;
  /** The quarantine keeps at most this many rejected requests (the newest). */
  rejectedMaxCount: number;
  /** The quarantine keeps at most this many bytes of rejected requests (the newest). */
  rejectedMaxBytes: number;
  /** Rejected requests of one source kept per second (per process); more are answered, not kept. */
  rejectedRateLimit: number;
  /** Collector processes on this machine (node cluster); more than 1 needs the PostgreSQL store. */
  workers: number;
  /** PostgreSQL store: most connections of the pool of each process. */
  pgPoolSize: number;
  /** PostgreSQL store: apply missing migrations at start; when false, refuse to start without them. */
  pgMigrate: boolean;
  /** PostgreSQL store: LISTEN for source and schema changes of other processes (else the TTLs alone). */
  pgNotify: boolean;
  /** Seconds a device clock may differ from the server's before its event times are corrected. */
  clockSkewSec: number;
  /**
   * Which proxies in front of the service are trusted for `X-Forwarded-For`: none (false), every
   * one (true), the N nearest hops (a number), or those at these addresses and networks.
   */
  trustProxy: boolean | number | string[];
  /** Give new sessions the device, OS, browser and country of their first request. */
  enrich: boolean;
  /** Requests of bots (by User-Agent): stored and tagged, or answered and dropped. */
  bots: 'tag' | 'drop';
  /** Store client addresses with their last IPv4 octet or last 80 IPv6 bits zeroed. */
  ipAnonymize: boolean;
  /** A batch that keeps failing for longer than this many seconds goes to the failed list. */
  deliveryMaxAgeSec: number;
  /** Seconds a process holds a destination's delivery without renewing it (another takes over after). */
  deliveryLeaseSec: number;
  /** Longest exchange with a destination (10 s; changed by tests only). */
  deliveryTimeoutMs: number;
  /** First and longest wait between attempts of a batch (1 s and 10 min; changed by tests only). */
  deliveryBackoffMinMs: number;
  deliveryBackoffMaxMs: number;
  logLevel: string;
  /** Log one line per HTTP request (off by default: the collector logs rejections and errors). */
  accessLog: boolean;
  /** Seconds a client may take to send a whole request (headers and body); 0 = no limit. */
  requestTimeoutSec: number;
  /** Seconds a client may take to send the request line and headers. */
  headersTimeoutSec: number;
  /** Seconds a kept-alive connection may stay idle between requests. */
  idleTimeoutSec: number;
  /** Most open client connections; more are closed as they arrive. */
  maxConnections: number;
  /** Seconds requests in flight get to finish after SIGTERM/SIGINT before connections are closed. */
  shutdownGraceSec: number;
  /** Events older than this many days are deleted in the background; null keeps them forever. */
  eventRetentionDays: number | null;
}

export class ConfigError extends Error {}

const FALSE_WORDS = new Set(['no', 'false', '0', 'off']);
const TRUE_WORDS = new Set(['yes', 'true', '1', 'on']);

export function defaultConfig(overrides: Partial<Config> = {}): Config {
  return {
    port: 8686,
    host: '127.0.0.1',
    dataDir: './data',
    databaseUrl: undefined,
    apiToken: undefined,
    validatorTtlSec: 180,
    sourceTtlSec: 5,
    bodyLimit: 1_048_576,
    maxEvents: 1000,
    maxDepth: 32,
    debug: true,
    sync: 'normal',
    writeQueueLimit: 20_000,
    rateLimit: 0,
    clientRateLimit: 0,
    rejectedMaxAgeDays: 30,
    rejectedMaxCount: 100_000,
    rejectedMaxBytes: 256 * 1024 * 1024,
    rejectedRateLimit: 10,
    workers: 1,
    pgPoolSize: 10,
    pgMigrate: true,
    pgNotify: true,
    clockSkewSec: 60,
    trustProxy: false,
    enrich: true,
    bots: 'tag',
    ipAnonymize: false,
    deliveryMaxAgeSec: 86_400,
    deliveryLeaseSec: 30,
    deliveryTimeoutMs: 10_000,
    deliveryBackoffMinMs: 1000,
    deliveryBackoffMaxMs: 600_000,
    logLevel: 'info',
    accessLog: false,
    requestTimeoutSec: 30,
    headersTimeoutSec: 10,
    idleTimeoutSec: 72,
    maxConnections: 10_000,
    shutdownGraceSec: 10,
    eventRetentionDays: null,
    ...overrides,
  };
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new ConfigError(`${name} must be an integer >= ${min}, got "${raw}"`);
  }
  return value;
}

function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (FALSE_WORDS.has(raw)) return false;
  if (TRUE_WORDS.has(raw)) return true;
  throw new ConfigError(`${name} must be yes or no, got "${env[name]}"`);
}

function text(env: Env, name: string): string | undefined {
  const raw = env[name]?.trim();
  return raw === undefined || raw === '' ? undefined : raw;
}

/** A proxy address or network of TRACK_TRUST_PROXY: an IP, an IP/prefix, or a named range. */
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function proxyEntry(entry: string): boolean {
  if (NAMED_RANGES.has(entry)) return true;
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

function trustProxy(env: Env): Config['trustProxy'] {
  const raw = text(env, 'TRACK_TRUST_PROXY');
  if (raw === undefined) return false;
  const word = raw.toLowerCase();
  if (word === 'no' || word === 'false' || word === 'off') return false;
  if (word === 'yes' || word === 'true' || word === 'on') return true;
  if (/^\d+$/.test(raw)) {
    const hops = Number(raw);
    if (hops > 1000) throw new ConfigError(`TRACK_TRUST_PROXY must be at most 1000 hops, got "${raw}"`);
    return hops === 0 ? false : hops;
  }
  const entries = raw.split(',').map((entry) => entry.trim());
  const bad = entries.find((entry) => !proxyEntry(entry));
  if (bad !== undefined) {
    throw new ConfigError(
      `TRACK_TRUST_PROXY must be yes, no, a number of hops or a list of addresses and networks, got "${bad}"`,
    );
  }
  return entries;
}

export function loadConfig(env: Env): Readonly<Config> {
  const base = defaultConfig();
  const sync = text(env, 'TRACK_SYNC') ?? base.sync;
  if (sync !== 'normal' && sync !== 'full') {
    throw new ConfigError(`TRACK_SYNC must be normal or full, got "${sync}"`);
  }
  const databaseUrl = text(env, 'DATABASE_URL');
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must start with postgres:// or postgresql://');
  }
  const workers = integer(env, 'TRACK_WORKERS', base.workers, 1);
  if (workers > 1 && databaseUrl === undefined) {
    throw new ConfigError(
      `TRACK_WORKERS=${workers} needs the PostgreSQL store (DATABASE_URL): the embedded store allows one writer process`,
    );
  }
  const requestTimeoutSec = integer(env, 'TRACK_REQUEST_TIMEOUT', base.requestTimeoutSec, 0);
  const headersTimeoutSec = integer(env, 'TRACK_HEADERS_TIMEOUT', base.headersTimeoutSec, 1);
  if (requestTimeoutSec > 0 && headersTimeoutSec > requestTimeoutSec) {
    throw new ConfigError(
      `TRACK_HEADERS_TIMEOUT (${headersTimeoutSec}) must not exceed TRACK_REQUEST_TIMEOUT (${requestTimeoutSec})`,
    );
  }
  const retention = text(env, 'TRACK_EVENT_RETENTION_DAYS');
  const bots = (text(env, 'TRACK_BOTS') ?? base.bots).toLowerCase();
  if (bots !== 'tag' && bots !== 'drop') {
    throw new ConfigError(`TRACK_BOTS must be tag or drop, got "${env.TRACK_BOTS}"`);
  }
  return Object.freeze({
    port: integer(env, 'PORT', base.port, 0),
    host: text(env, 'HOST') ?? base.host,
    dataDir: text(env, 'TRACK_DATA_DIR') ?? base.dataDir,
    databaseUrl,
    apiToken: text(env, 'TRACK_API_TOKEN'),
    validatorTtlSec: integer(env, 'EVENT_VALIDATOR_TTL', base.validatorTtlSec, 0),
    sourceTtlSec: integer(env, 'TRACK_SOURCE_TTL', base.sourceTtlSec, 0),
    bodyLimit: integer(env, 'TRACK_BODY_LIMIT', base.bodyLimit, 1),
    maxEvents: integer(env, 'TRACK_MAX_EVENTS', base.maxEvents, 1),
    maxDepth: integer(env, 'TRACK_MAX_DEPTH', base.maxDepth, 2),
    debug: flag(env, 'TRACK_DEBUG', base.debug),
    sync,
    writeQueueLimit: integer(env, 'TRACK_WRITE_QUEUE', base.writeQueueLimit, 1),
    rateLimit: integer(env, 'TRACK_RATE_LIMIT', base.rateLimit, 0),
    clientRateLimit: integer(env, 'TRACK_CLIENT_RATE_LIMIT', base.clientRateLimit, 0),
    rejectedMaxAgeDays: integer(env, 'TRACK_REJECTED_MAX_AGE_DAYS', base.rejectedMaxAgeDays, 1),
    rejectedMaxCount: integer(env, 'TRACK_REJECTED_MAX_COUNT', base.rejectedMaxCount, 1),
    rejectedMaxBytes: integer(env, 'TRACK_REJECTED_MAX_BYTES', base.rejectedMaxBytes, 1),
    rejectedRateLimit: integer(env, 'TRACK_REJECTED_RATE_LIMIT', base.rejectedRateLimit, 0),
    workers,
    pgPoolSize: integer(env, 'TRACK_PG_POOL', base.pgPoolSize, 1),
    pgMigrate: flag(env, 'TRACK_PG_MIGRATE', base.pgMigrate),
    pgNotify: flag(env, 'TRACK_PG_NOTIFY', base.pgNotify),
    clockSkewSec: integer(env, 'TRACK_CLOCK_SKEW', base.clockSkewSec, 0),
    trustProxy: trustProxy(env),
    enrich: flag(env, 'TRACK_ENRICH', base.enrich),
    bots,
    ipAnonymize: flag(env, 'TRACK_IP_ANONYMIZE', base.ipAnonymize),
    deliveryMaxAgeSec: integer(env, 'TRACK_DELIVERY_MAX_AGE', base.deliveryMaxAgeSec, 1),
    deliveryLeaseSec: integer(env, 'TRACK_DELIVERY_LEASE', base.deliveryLeaseSec, 15),
    deliveryTimeoutMs: base.deliveryTimeoutMs,
    deliveryBackoffMinMs: base.deliveryBackoffMinMs,
    deliveryBackoffMaxMs: base.deliveryBackoffMaxMs,
    logLevel: text(env, 'LOG_LEVEL') ?? base.logLevel,
    accessLog: flag(env, 'TRACK_ACCESS_LOG', base.accessLog),
    requestTimeoutSec,
    headersTimeoutSec,
    idleTimeoutSec: integer(env, 'TRACK_IDLE_TIMEOUT', base.idleTimeoutSec, 1),
    maxConnections: integer(env, 'TRACK_MAX_CONNECTIONS', base.maxConnections, 1),
    shutdownGraceSec: integer(env, 'TRACK_SHUTDOWN_GRACE', base.shutdownGraceSec, 0),
    eventRetentionDays: retention === undefined ? null : integer(env, 'TRACK_EVENT_RETENTION_DAYS', 0, 1),
  });
}
