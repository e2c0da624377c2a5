import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { resolveApiToken } from './token.js';

/** The only place that reads the environment, listens and handles signals. */
async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const { token, file } = resolveApiToken(config);
  const app = await buildApp({ config: { ...config, apiToken: token } });
  if (file) app.log.info({ file }, `management API token is in ${file} (set TRACK_API_TOKEN to choose one)`);

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

main().catch((error: unknown) => {
  if (error instanceof ConfigError) console.error(`configuration error: ${error.message}`);
  else console.error(error);
  process.exit(1);
});
