/** The service as a real process, for tests that kill, restart or run several of it. */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Where the kernel's range for the local ports of outgoing connections starts (Linux; else the
 * usual default), read once.
 */
const EPHEMERAL_LOW = (() => {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 20_100 ? low : 32_768;
  } catch {
    return 32_768;
  }
})();

/**
 * A TCP port nothing listens on right now, for a server started next. Chosen at random below the
 * kernel's range for outgoing connections: a port from that range (what `listen(0)` gives) can be
 * taken as the local end of any connection made before the server listens (seen: EADDRINUSE).
 * A port in use is passed over; any other failure to listen is thrown.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * (EPHEMERAL_LOW - 20_000));
    const server = createServer();
    const bound = await new Promise<boolean>((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) =>
        error.code === 'EADDRINUSE' ? resolve(false) : reject(error),
      );
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (!bound) continue;
    server.close();
    await once(server, 'close');
    return port;
  }
}

/**
 * Spawns `src/server.ts` with the environment given (on top of the test's own; LOG_LEVEL warn by
 * default) and its arguments (a command such as `migrate`; none to serve).
 */
export function spawnServer(
  env: Record<string, string>,
  args: string[] = [],
): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  return { child, output: () => output };
}

/** Waits for /health to answer 200 (the machine may be slow: up to 90 s). */
export async function waitForHealth(base: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${output()}`);
    try {
      if ((await fetch(`${base}/health`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`server did not become healthy:\n${output()}`);
}
