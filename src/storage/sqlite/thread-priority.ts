/**
 * The scheduling priority of the embedded store's threads (docs/architecture.md#the-write-path).
 * When the cores are all busy, the thread that parses and answers requests goes first and the
 * writer thread takes what is left. With a core to spare, nothing changes.
 */
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** The niceness the writer thread (and the checkpointer it starts) adds to the service's. */
export const WRITER_NICENESS = 10;

/** Linux's highest niceness, the lowest priority. */
const LOWEST = 19;

/** The kernel's id of the calling thread (Linux), or null where threads have none to name. */
export function taskId(): number | null {
  try {
    const id = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isSafeInteger(id) && id > 0 ? id : null;
  } catch {
    return null;
  }
}

/**
 * Adds `by` to the calling thread's niceness (threads it starts afterwards inherit it). Where a
 * thread's priority cannot be set on its own (not Linux), the thread keeps the service's priority,
 * as any thread does.
 */
export function lowerThreadPriority(by: number): void {
  const id = taskId();
  if (id === null) return;
  try {
    setPriority(id, Math.min(LOWEST, getPriority(id) + by));
  } catch {
    // Refused: the thread keeps the service's priority.
  }
}
