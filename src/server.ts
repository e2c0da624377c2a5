import cluster from 'node:cluster';
import { buildApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { MigrationsMissingError } from './storage/store.js';
import { resolveApiToken } from './token.js';

/** The only place that reads the environment, listens and handles signals. */
async function main(): Promise<void> {
  const config = loadConfig(process.env);
  if (config.workers > 1 && cluster.isPrimary) return supervise(config);
  return serve(config);
}

/** One collector process: builds the app and listens until SIGTERM/SIGINT. */
async function serve(config: Config): Promise<void> {
  const { token, file } = resolveApiToken(config);
  const app = await buildApp({ config: { ...config, apiToken: token } });
  if (file && cluster.isPrimary) {
    app.log.info({ file }, `management API token is in ${file} (set TRACK_API_TOKEN to choose one)`);
  }

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: finishing in-flight requests');
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));

  await app.listen({ port: config.port, host: config.host });
}

/**
 * TRACK_WORKERS=N: the primary forks N collectors sharing the port (node cluster), replaces one that
 * dies, and on SIGTERM/SIGINT lets each finish its in-flight requests before exiting.
 */
function supervise(config: Config): void {
  const { file } = resolveApiToken(config); // created once here, read by every worker
  const log = (msg: string) =>
    console.log(JSON.stringify({ level: 30, time: Date.now(), pid: process.pid, msg }));
  if (file) log(`management API token is in ${file} (set TRACK_API_TOKEN to choose one)`);
  let stopping = false;
  let restarts = 0;
  for (let i = 0; i < config.workers; i++) cluster.fork();
  log(`started ${config.workers} collector processes on port ${config.port}`);

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

main().catch((error: unknown) => {
  if (error instanceof ConfigError) console.error(`configuration error: ${error.message}`);
  else if (error instanceof MigrationsMissingError) {
    console.error(
      `configuration error: ${error.message} and TRACK_PG_MIGRATE=no: run \`npm run migrate\` with this DATABASE_URL first`,
    );
  } else console.error(error);
  process.exit(1);
});
