/**
 * The servers a benchmark drives, as child processes: start, wait until ready, stop. Each child's
 * output goes to `<logDir>/<name>.log`, and its last lines are kept for error messages.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/support/process.js';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** Where the benchmarks write their results and their children's logs. */
export const RESULTS = join(ROOT, 'bench', 'results');
export const HOST = '127.0.0.1';
/** The API token of every service a benchmark starts. */
export const TOKEN = 'bench-token';

export interface Child {
  name: string;
  proc: ChildProcess;
  pid: number;
  port: number;
  logTail: string[];
  logLines: number;
  exited: Promise<number | null>;
}

const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

/** A free port below the kernel's range for outgoing connections (the test suite's own helper). */
export { freePort };

/** Starts `node <args>` in the repository with PORT and HOST set. */
export function spawnChild(
  name: string,
  args: string[],
  env: Record<string, string>,
  port: number,
  logDir: string,
): Child {
  const proc = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port), HOST },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (proc.pid === undefined) throw new Error(`could not start ${name}`);
  const log = createWriteStream(join(logDir, `${name}.log`));
  const child: Child = {
    name,
    proc,
    pid: proc.pid,
    port,
    logTail: [],
    logLines: 0,
    exited: new Promise((ok) => proc.once('exit', (code) => ok(code))),
  };
  const onData = (chunk: Buffer) => {
    log.write(chunk);
    for (const line of chunk.toString('utf8').split('\n')) {
      if (line.trim() === '') continue;
      child.logLines++;
      child.logTail.push(line.slice(0, 500));
      if (child.logTail.length > 20) child.logTail.shift();
    }
  };
  proc.stdout?.on('data', onData);
  proc.stderr?.on('data', onData);
  void child.exited.then(() => log.end());
  return child;
}

export async function waitUntil(
  child: Child,
  probe: () => Promise<boolean>,
  timeoutMs = 30_000,
): Promise<void> {
  let exited = false;
  void child.exited.then(() => (exited = true));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exited) throw new Error(`${child.name} exited during start:\n${child.logTail.join('\n')}`);
    if (await probe().catch(() => false)) return;
    await sleep(100);
  }
  throw new Error(`${child.name} did not become ready within ${timeoutMs} ms:\n${child.logTail.join('\n')}`);
}

/** Waits until a child has printed `ready` (the bench's own servers do once listening). */
export const printedReady = (child: Child) =>
  waitUntil(child, async () => child.logTail.some((l) => l.startsWith('ready')));

/** One of the bench's own servers (bare or floor), `node --import tsx <script>`, on a free port. */
export async function spawnBenchServer(
  name: string,
  script: string,
  env: Record<string, string>,
  logDir: string,
): Promise<Child> {
  return spawnChild(name, ['--import', 'tsx', script], env, await freePort(), logDir);
}

/**
 * The service (`node [nodeArgs] dist/server.js`, built by `npm run build`) as a child on a free port,
 * with the bench's API token and warnings-only logs; `env` adds or overrides settings.
 */
export async function spawnService(
  name: string,
  env: Record<string, string>,
  logDir: string,
  nodeArgs: string[] = [],
): Promise<Child> {
  const settings = { TRACK_API_TOKEN: TOKEN, LOG_LEVEL: 'warn', ...env };
  return spawnChild(name, [...nodeArgs, 'dist/server.js'], settings, await freePort(), logDir);
}

/** Waits until a service child answers `GET /health` with 200. */
export const serviceReady = (child: Child) =>
  waitUntil(child, async () => (await fetch(`http://${HOST}:${child.port}/health`)).status === 200);

/** A request to a service child's API with the bench's token; the body, if any, as JSON. */
export function apiRequest(
  child: Child,
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  body?: unknown,
): Promise<Response> {
  return fetch(`http://${HOST}:${child.port}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${TOKEN}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** The JSON answer of an API request; throws unless the service answers 200. */
export async function apiJson<T>(child: Child, method: 'GET' | 'POST', path: string, body?: unknown) {
  const res = await apiRequest(child, method, path, body);
  if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** Creates an event source through the service's API; throws unless it answers 200. */
export async function createSource(child: Child, id: string, name: string): Promise<void> {
  await apiJson(child, 'POST', '/event-source', { id, name });
}

/** True once a child has exited or was killed. */
export const gone = (child: Child) => child.proc.exitCode !== null || child.proc.signalCode !== null;

export async function stopChild(child: Child): Promise<void> {
  if (gone(child)) return;
  child.proc.kill('SIGTERM');
  const timer = setTimeout(() => child.proc.kill('SIGKILL'), 30_000);
  await child.exited;
  clearTimeout(timer);
}

/**
 * On SIGINT or SIGTERM: kills the children, runs `cleanup` and exits with 130. Returns the function
 * that removes these handlers again.
 */
export function stopOnSignal(children: Child[], cleanup: () => void): () => void {
  const onSignal = () => {
    for (const child of children) child.proc.kill('SIGTERM');
    cleanup();
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
}

/**
 * A process and its descendants (the collector processes of a service with TRACK_WORKERS), read
 * from the parent ids in /proc/<pid>/stat.
 */
export function withDescendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // After the command name (which may hold spaces): state, then the parent's id.
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  const all = [pid];
  for (let i = 0; i < all.length; i++) all.push(...(children.get(all[i]!) ?? []));
  return all;
}

/** The commit the service is built from, marked when src/ has uncommitted changes. */
export function revision(): string {
  const git = (...args: string[]) =>
    spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' }).stdout?.trim() ?? '';
  const commit = git('rev-parse', '--short', 'HEAD') || 'unknown';
  return git('status', '--porcelain', '--', 'src') ? `${commit} + uncommitted changes in src/` : commit;
}
