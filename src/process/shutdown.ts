import type { FastifyInstance } from 'fastify';

/** Time allowed after the grace period for what is queued to commit and the store to close. */
const CLOSE_MS = 30_000;

/**
 * Stops the app on SIGTERM or SIGINT (docs/api.md#shutdown): no new connections; requests in flight
 * get `graceSec` seconds to finish, then the connections still open are closed; the store commits
 * what is queued and closes; the process exits 0. A second signal closes the connections at once.
 * `released` runs once the app is closed, before the exit.
 */
export function stopOnSignals(app: FastifyInstance, graceSec: number, released: () => void): void {
  let closing = false;
  const closeConnections = (why: string) => {
    app.log.warn(why);
    app.server.closeAllConnections();
  };
  const stop = (signal: NodeJS.Signals) => {
    if (closing) return closeConnections(`${signal} again: closing the connections still open now`);
    closing = true;
    app.log.info({ signal }, `shutting down: finishing in-flight requests (up to ${graceSec} s)`);
    const grace = setTimeout(
      () => closeConnections(`grace period of ${graceSec} s over: closing the connections still open`),
      graceSec * 1000,
    );
    setTimeout(
      () => {
        app.log.error('shutdown did not finish in time: exiting');
        process.exit(1);
      },
      graceSec * 1000 + CLOSE_MS,
    );
    grace.unref();
    app.close().then(
      () => {
        released();
        app.log.info('stopped');
        process.exit(0);
      },
      (error: unknown) => {
        app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
