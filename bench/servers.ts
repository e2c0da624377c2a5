/**
 * The two servers of a `npm run bench` run: the service on its store (`node dist/server.js`) and the
 * bare server (bench/bare-server.ts), each a child process on a free port, logging to
 * bench/results/. Stopped together, with the store, at the end or on a signal.
 */
import {
  printedReady,
  RESULTS,
  serviceReady,
  spawnBenchServer,
  spawnService,
  stopChild,
  stopOnSignal,
  type Child,
} from './processes.js';
import type { ServiceStore } from './stores.js';

export interface Servers {
  service: Child;
  bare: Child;
  /** The CPU the service's PostgreSQL server has used so far, µs (stores.ts), when measured. */
  databaseCpu?: () => number | null;
}

/** Starts both and waits until they answer; `stop` stops them and closes the store. */
export async function startServers(
  store: ServiceStore,
  nodeArgs: string[],
  keepData: boolean,
): Promise<Servers & { stop(): Promise<void> }> {
  const service = await spawnService('service', store.env, RESULTS, nodeArgs);
  const children: Child[] = [service];
  const removeHandlers = stopOnSignal(children, () => keepData || store.removeData());
  const stop = async () => {
    await Promise.all(children.map(stopChild));
    removeHandlers();
    await store.close(keepData);
  };
  try {
    const bare = await spawnBenchServer('bare', 'bench/bare-server.ts', {}, RESULTS);
    children.push(bare);
    await serviceReady(service);
    await printedReady(bare);
    return { service, bare, stop, ...(store.databaseCpu ? { databaseCpu: store.databaseCpu } : {}) };
  } catch (error) {
    await stop();
    throw error;
  }
}
