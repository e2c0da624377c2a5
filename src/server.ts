import cluster from 'node:cluster';
import { fileURLToPath } from 'node:url';
import { buildApp } from './app.js';
import { loadConfig, type Config } from './config.js';
import { startFailure } from './process/start-failure.js';
import { stopOnSignals } from './process/shutdown.js';
import { backupStorage, claimStorage, migrateStorage } from './storage/index.js';
import { resolveApiToken } from './token.js';

/**
 * The only place that reads the environment, listens and handles signals. Without arguments it
 * serves; `migrate` applies the store's migrations, `backup <file>` copies the embedded store
 * (docs/api.md#commands).
 */
async function main(config: Config): Promise<void> {
  const [command, ...args] = process.argv.slice(2);
  if (command === 'migrate') return console.log(await migrateStorage(config));
  if (command === 'backup') {
    if (args.length !== 1) return usage('backup needs one argument: the file to write');
    return console.log(await backupStorage(config, args[0]!));
  }
  if (command !== undefined) return usage(`unknown command ${JSON.stringify(command)}`);
  if (config.workers > 1 && cluster.isPrimary) return supervise(config);
  return serve(config);
}

function usage(problem: string): void {
  console.error(`${problem}: the commands are \`migrate\` and \`backup <file>\` (none: serve)`);
  process.exitCode = 2;
}

/** Where a browser reaches the service listening on `host`. */
function reachable(host: string, port: number): string {
  const name = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return `http://${name}:${port}`;
}

/** One collector process: builds the app and listens until SIGTERM/SIGINT. */
async function serve(config: Config): Promise<void> {
  const release = claimStorage(config);
  try {
    const { token, file } = resolveApiToken(config);
    const app = await buildApp({ config: { ...config, apiToken: token } });
    if (file && cluster.isPrimary) {
      app.log.info({ file }, `management API token is in ${file} (set TRACK_API_TOKEN to choose one)`);
    }
    stopOnSignals(app, config.shutdownGraceSec, release);
    try {
      await app.listen({ port: config.port, host: config.host });
    } catch (error) {
      await app.close();
      throw error;
    }
    if (cluster.isPrimary) {
      const port = (app.server.address() as { port: number }).port;
      const base = reachable(config.host, port);
      app.log.info(
        { console: `${base}/console/`, docs: `${base}/docs` },
        `console at ${base}/console/, API documentation at ${base}/docs`,
      );
    }
  } catch (error) {
    release();
    throw error;
  }
}

/**
 * TRACK_WORKERS=N: the primary forks N collectors sharing the port (node cluster), replaces one that
 * dies, and on SIGTERM/SIGINT lets each finish its in-flight requests before exiting.
 */
function supervise(config: Config): void {
  const { file } = resolveApiToken(config); // created once here, read by every worker
  const log = (msg: string) =>
    console.log(JSON.stringify({ level: 30, time: new Date().toISOString(), pid: process.pid, msg }));
  if (file) log(`management API token is in ${file} (set TRACK_API_TOKEN to choose one)`);
  let stopping = false;
  let restarts = 0;
  // Workers run this file, whatever started the primary (`npm start` runs a launcher first).
  cluster.setupPrimary({ exec: fileURLToPath(import.meta.url), args: [] });
  for (let i = 0; i < config.workers; i++) cluster.fork();
  const base = reachable(config.host, config.port);
  log(`started ${config.workers} collector processes on port ${config.port}`);
  log(`console at ${base}/console/, API documentation at ${base}/docs`);

  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
      return;
    }
    restarts++;
    log(`collector ${worker.process.pid} exited (${signal ?? code}); starting a replacement`);
    // Back off when processes keep dying (e.g. the database refuses connections at start).
    setTimeout(() => cluster.fork(), Math.min(10_000, 200 * restarts));
  });
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: stopping ${Object.keys(cluster.workers ?? {}).length} collector processes`);
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal);
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

let config: Config | undefined;
try {
  config = loadConfig(process.env);
  await main(config);
} catch (error) {
  const line = startFailure(error, config);
  console.error(line ?? error);
  process.exit(1);
}
