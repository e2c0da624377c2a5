/**
 * The production path, as the README describes it: `npm start` builds what is missing and runs the
 * built service in its own process, so that a supervisor's SIGTERM to the npm process stops it
 * gracefully; a production install (dependencies only, no build tools) starts, migrates and backs
 * up from dist alone.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { tempDir } from '../helpers.js';
import { freePort, ROOT, waitForHealth } from '../support/process.js';

/** The files a clone has (node_modules apart), copied into `dir`. */
function copySources(dir: string): void {
  for (const name of [
    'src',
    'scripts',
    'console',
    'tracker',
    'package.json',
    'package-lock.json',
    'tsconfig.json',
    'tsconfig.build.json',
  ]) {
    cpSync(join(ROOT, name), join(dir, name), { recursive: true });
  }
}

/** The packages a production install has (`npm ci --omit=dev`), hard-linked from this checkout's. */
function productionModules(dir: string): void {
  const listed = execFileSync('npm', ['ls', '--omit=dev', '--all', '--parseable'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  const top = new Set<string>();
  for (const path of listed.split('\n')) {
    const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path.slice(ROOT.length - 1));
    if (match) top.add(match[1]!);
  }
  assert.ok(top.has('fastify') && top.has('better-sqlite3') && !top.has('typescript') && !top.has('tsx'));
  for (const name of top) {
    mkdirSync(join(dir, 'node_modules', name, '..'), { recursive: true });
    execFileSync('cp', ['-al', join(ROOT, 'node_modules', name), join(dir, 'node_modules', name)]);
  }
}

interface Started {
  child: ChildProcess;
  output: () => string;
  base: string;
}

/** Runs `npm <args>` in `cwd` as a supervisor would: no shell, its own pid to signal. */
function npm(
  cwd: string,
  args: string[],
  env: Record<string, string>,
): { child: ChildProcess; output: () => string } {
  const child = spawn('npm', args, {
    cwd,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  return { child, output: () => output };
}

async function start(cwd: string, command: string[], env: Record<string, string> = {}): Promise<Started> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const started =
    command[0] === 'npm'
      ? npm(cwd, command.slice(1), { PORT: String(port), TRACK_DATA_DIR: join(cwd, 'data'), ...env })
      : (() => {
          const child = spawn(process.execPath, command.slice(1), {
            cwd,
            env: {
              ...process.env,
              LOG_LEVEL: 'info',
              PORT: String(port),
              TRACK_DATA_DIR: join(cwd, 'data'),
              ...env,
            },
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          let output = '';
          child.stdout!.on('data', (chunk) => (output += chunk));
          child.stderr!.on('data', (chunk) => (output += chunk));
          return { child, output: () => output };
        })();
  await waitForHealth(base, started.child, started.output);
  return { ...started, base };
}

/** The pid of the process that logged the start lines (the service itself). */
function servicePid(output: string): number {
  const line = output.split('\n').find((l) => l.includes('"msg":"console at '));
  assert.ok(line, output);
  return (JSON.parse(line) as { pid: number }).pid;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** SIGTERM to the started process alone; answers its exit code once it and the service are gone. */
async function stopGracefully(started: Started): Promise<number | null> {
  const pid = servicePid(started.output());
  const exited = once(started.child, 'exit') as Promise<[number | null]>;
  started.child.kill('SIGTERM');
  const [code] = await exited;
  assert.equal(alive(pid), false, `the service (pid ${pid}) is still running:\n${started.output()}`);
  await assert.rejects(fetch(`${started.base}/health`), 'nothing answers on the port any more');
  assert.match(started.output(), /shutting down/);
  assert.match(started.output(), /"msg":"stopped"/);
  return code;
}

describe('production path', () => {
  let clone: string;
  let production: string;

  before(() => {
    clone = tempDir('collector-clone-');
    copySources(clone);
    symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'));
  });

  after(() => {
    for (const dir of [clone, production]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('npm start on a fresh clone builds dist, serves, and stops gracefully on SIGTERM to the npm process', async (t) => {
    const started = await start(clone, ['npm', 'start']);
    t.after(() => started.child.kill('SIGKILL'));
    assert.match(started.output(), /dist\/server\.js is missing: building it first/);
    assert.ok(existsSync(join(clone, 'dist', 'public', 'console', 'index.html')));
    assert.equal((await fetch(`${started.base}/`)).status, 200);
    assert.equal(await stopGracefully(started), 0);

    // Up to date now: the next start does not build.
    const again = await start(clone, ['npm', 'start']);
    t.after(() => again.child.kill('SIGKILL'));
    assert.doesNotMatch(again.output(), /building/);
    assert.equal(await stopGracefully(again), 0);
  });

  test('a production install (no dev dependencies) starts, migrates and backs up from dist', async (t) => {
    assert.ok(existsSync(join(clone, 'dist', 'server.js')), 'built by the test before');
    production = tempDir('collector-production-');
    for (const name of ['dist', 'scripts', 'package.json', 'package-lock.json']) {
      cpSync(join(clone, name), join(production, name), { recursive: true });
    }
    productionModules(production);
    const env = { ...process.env, TRACK_DATA_DIR: join(production, 'data') };

    const migrate = spawnSync('npm', ['run', 'migrate'], { cwd: production, env, encoding: 'utf8' });
    assert.equal(migrate.status, 0, migrate.stdout + migrate.stderr);
    assert.match(migrate.stdout, /the embedded store in .* is up to date/);

    const started = await start(production, ['npm', 'start']);
    t.after(() => started.child.kill('SIGKILL'));
    assert.doesNotMatch(started.output(), /build/);
    const backup = spawnSync('npm', ['run', 'backup', '--', join(production, 'copy.db')], {
      cwd: production,
      env,
      encoding: 'utf8',
    });
    assert.equal(backup.status, 0, backup.stdout + backup.stderr);
    assert.match(backup.stdout, /backup of .*collector\.db written to .*copy\.db/);
    assert.equal(await stopGracefully(started), 0);

    // The built service run directly, as the container image and the systemd unit do.
    const direct = await start(production, ['node', 'dist/server.js']);
    t.after(() => direct.child.kill('SIGKILL'));
    assert.equal(await stopGracefully(direct), 0);
  });
});
