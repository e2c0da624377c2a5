/**
 * Waits before a leg until the servers under test are idle. After a leg under load the service goes
 * on working for a while (its checkpointer copies the log back into the database file, the writer
 * finishes its queue); a leg of the next server started meanwhile would run beside that work and
 * count it against itself, which made the bare server's figure swing by a third between scenarios
 * of one run.
 */
import { processTreeCpuUs } from './cpu.js';

/** Idle: under this much CPU (µs) of all the processes in a 200 ms window (5% of a core). */
const IDLE_US = 10_000;
const WINDOW_MS = 200;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const cpuOf = (pids: number[]) => pids.reduce((sum, pid) => sum + (processTreeCpuUs(pid) ?? 0), 0);

/** Resolves once `pids` (and their children) were idle for a window, or after `maxMs`; answers the wait in ms. */
export async function settle(pids: number[], maxMs = 15_000): Promise<number> {
  const started = Date.now();
  let before = cpuOf(pids);
  for (;;) {
    await sleep(WINDOW_MS);
    const now = cpuOf(pids);
    if (now - before < IDLE_US || Date.now() - started >= maxMs) return Date.now() - started;
    before = now;
  }
}
