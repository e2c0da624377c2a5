/**
 * CPU accounting of a benchmark leg, from /proc: how much CPU the server under test used per request
 * (all its threads, and all its processes when given several), how much the load generator (this process) used, and how busy the whole machine
 * was. With the load generator on the same cores, these say whether a server was short of CPU or
 * waiting.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Linux reports process times in clock ticks of 1/100 s (USER_HZ) on every platform Node runs on. */
const TICK_US = 10_000;

/**
 * Fields of /proc/<pid>/stat (or of a thread's, /proc/<pid>/task/<tid>/stat, given `<pid>/task/<tid>`)
 * after the command name (which may hold spaces), from state on.
 */
function statFields(pid: number | string): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** User + system CPU of a process (all its threads) or of one thread, in µs; null once it is gone. */
function processCpuUs(pid: number | string): number | null {
  const fields = statFields(pid);
  // utime and stime are the 12th and 13th fields from state on.
  return fields ? (Number(fields[11]) + Number(fields[12])) * TICK_US : null;
}

/** User + system CPU of the calling thread, in µs (10 ms steps). */
export const ownThreadCpuUs = (): number => processCpuUs('thread-self') ?? 0;

/**
 * CPU of a process and of all its descendants, the ended ones included (a server that forks a
 * process per connection, as PostgreSQL does): its own time, the time of the children it has
 * reaped (cutime, cstime), and the same of each living child. Null once the process is gone.
 */
export function processTreeCpuUs(root: number): number | null {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const parent = Number(statFields(Number(entry))?.[1]);
    if (parent) parents.set(parent, [...(parents.get(parent) ?? []), Number(entry)]);
  }
  const own = (pid: number) => {
    const f = statFields(pid);
    return f ? (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * TICK_US : null;
  };
  const total = own(root);
  if (total === null) return null;
  let sum = total;
  const queue = [...(parents.get(root) ?? [])];
  while (queue.length > 0) {
    const pid = queue.pop()!;
    sum += own(pid) ?? 0; // ended meanwhile: its time is in its parent's reaped time
    queue.push(...(parents.get(pid) ?? []));
  }
  return sum;
}

/** Busy and total ticks of all CPUs (busy excludes idle and I/O wait). */
function machineTicks(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  const t = line.trim().split(/\s+/).slice(1).map(Number);
  const total = t.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: total - t[3]! - t[4]!, total };
}

/** User + system CPU of each thread of a process, in microseconds, by thread id; empty once it is gone. */
function threadCpuUs(pid: number): Map<number, number> {
  const times = new Map<number, number>();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return times;
  }
  for (const tid of tids) {
    const us = processCpuUs(`${pid}/task/${tid}`);
    if (us !== null) times.set(Number(tid), us); // null: the thread ended meanwhile
  }
  return times;
}

/** CPU per request of the server's own threads over a leg (its first process only), µs. */
export interface ThreadCpu {
  /** The main thread (the event loop that answers the requests). */
  main: number;
  /**
   * Each other thread that used at least 1 µs per request, most first: on the embedded store the
   * writer thread first, then the checkpointer and V8's helpers (garbage collection, compilation).
   */
  others: number[];
}

function threadDeltas(pid: number, before: Map<number, number>, requests: number): ThreadCpu | undefined {
  const after = threadCpuUs(pid);
  const main = after.get(pid);
  if (main === undefined) return undefined;
  const perRequest = (tid: number, us: number) => (us - (before.get(tid) ?? 0)) / requests;
  const others = [...after]
    .filter(([tid]) => tid !== pid)
    .map(([tid, us]) => Math.round(perRequest(tid, us)))
    .filter((us) => us >= 1)
    .sort((a, b) => b - a);
  return { main: Math.round(perRequest(pid, main)), others };
}

export interface LegCpu {
  /** CPU of the server under test per request, all threads, µs. */
  serverUsPerRequest: number;
  /** The same by thread, for a server given by its pid (not by a sampling function). */
  threads?: ThreadCpu;
  /** CPU of the server's PostgreSQL server per request, µs, when measured (bench/stores.ts). */
  databaseUsPerRequest?: number;
  /** CPU of the load generator per request, µs. */
  loadUsPerRequest: number;
  /** Share of the machine's cores that were busy during the leg, % (100 = every core). */
  machineBusyPercent: number;
}

/** CPU of the processes, the first one's and its descendants'; null once the first is gone. */
function processesCpuUs(pids: number[]): number | null {
  const [first, ...others] = pids.map(processCpuUs);
  if (first === null || first === undefined) return null;
  return others.reduce<number>((total, us) => total + (us ?? 0), first);
}

/**
 * Starts measuring the server `pid` (or the processes `pids`, the server first, or what `sample`
 * gives); `stop(requests)` gives the figures for the requests answered meanwhile.
 */
export function cpuMeter(pid: number | number[] | (() => number | null)): {
  stop(requests: number): LegCpu | null;
} {
  const sample = typeof pid === 'function' ? pid : () => processesCpuUs(Array.isArray(pid) ? pid : [pid]);
  const first = typeof pid === 'function' ? undefined : Array.isArray(pid) ? pid[0] : pid;
  const threads = first === undefined ? undefined : threadCpuUs(first);
  const server = sample();
  const load = process.cpuUsage();
  const machine = machineTicks();
  return {
    stop(requests) {
      const serverEnd = sample();
      const loadUsed = process.cpuUsage(load);
      const machineEnd = machineTicks();
      if (server === null || serverEnd === null || requests <= 0) return null;
      const total = machineEnd.total - machine.total;
      const byThread = first === undefined || !threads ? undefined : threadDeltas(first, threads, requests);
      return {
        serverUsPerRequest: Math.round((serverEnd - server) / requests),
        ...(byThread ? { threads: byThread } : {}),
        loadUsPerRequest: Math.round((loadUsed.user + loadUsed.system) / requests),
        machineBusyPercent: total > 0 ? Math.round((100 * (machineEnd.busy - machine.busy)) / total) : 0,
      };
    },
  };
}
