// `npm start`, `npm run migrate`, `npm run backup`: runs the built service, dist/server.js, in this
// process (so that a supervisor's SIGTERM reaches it), with the arguments given. When dist is missing
// or older than the sources, it is built first, if the build tools (dev dependencies) are installed;
// a production install (`npm ci --omit=dev`) runs the dist it was given and never builds.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const entry = join(root, 'dist', 'server.js');

/** Newest modification time of the files under `dir` (0 when it does not exist). */
function newest(dir) {
  if (!existsSync(dir)) return 0;
  let time = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    time = Math.max(time, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return time;
}

const mtime = (path) => (existsSync(path) ? statSync(path).mtimeMs : 0);

/** What is missing or out of date in dist, or null when it is up to date (or there are no sources). */
function staleness() {
  if (!existsSync(entry)) return 'dist/server.js is missing';
  if (newest(join(root, 'src')) > mtime(entry)) return 'the sources are newer than dist';
  const web = Math.min(
    mtime(join(root, 'dist', 'public', 'tracker.js')),
    mtime(join(root, 'dist', 'public', 'console', 'index.html')),
  );
  if (Math.max(newest(join(root, 'tracker')), newest(join(root, 'console'))) > web) {
    return 'the browser assets are missing or older than their sources';
  }
  return null;
}

function buildToolsInstalled() {
  try {
    createRequire(import.meta.url).resolve('typescript/package.json');
    return true;
  } catch {
    return false;
  }
}

/** Runs `npm run build`, passing on a signal received meanwhile. */
function build() {
  return new Promise((resolve, reject) => {
    const child = spawn(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', 'build'], {
      cwd: root,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    const forward = (signal) => child.kill(signal);
    process.on('SIGTERM', forward);
    process.on('SIGINT', forward);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      process.off('SIGTERM', forward);
      process.off('SIGINT', forward);
      if (code === 0) resolve();
      else
        reject(new Error(signal ? `the build stopped (${signal})` : `the build failed (exit code ${code})`));
    });
  });
}

const stale = staleness();
if (stale) {
  if (buildToolsInstalled()) {
    console.error(`${stale}: building it first (npm run build)`);
    try {
      await build();
    } catch (error) {
      console.error(error.message);
      process.exit(1);
    }
  } else if (!existsSync(entry)) {
    console.error(
      'dist/server.js is missing and the build tools are not installed: run `npm ci && npm run build` first (or install a built copy)',
    );
    process.exit(1);
  } else {
    console.error(`${stale}, but the build tools are not installed: running dist as it is`);
  }
}
await import(pathToFileURL(entry).href);
