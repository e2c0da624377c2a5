/**
 * `npm run migrate`: applies the store's schema migrations and exits. With DATABASE_URL, the
 * PostgreSQL migrations (safe to run while collectors start: they wait on an advisory lock); without
 * it, the embedded store's in TRACK_DATA_DIR.
 */
import { ConfigError, loadConfig } from '../src/config.js';
import { createStore } from '../src/storage/index.js';
import { migrate } from '../src/storage/postgres/migrations.js';

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  if (config.databaseUrl !== undefined) {
    const { applied, version } = await migrate({
      url: config.databaseUrl,
      connectTimeoutMs: 10_000,
      statementTimeoutMs: 0,
    });
    console.log(
      applied.length > 0
        ? `applied migrations ${applied.join(', ')}; the database is at version ${version}`
        : `nothing to apply; the database is at version ${version}`,
    );
    return;
  }
  const store = createStore(config);
  await store.open();
  await store.close();
  console.log(`the embedded store in ${config.dataDir} is up to date`);
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) console.error(`configuration error: ${error.message}`);
  else console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
