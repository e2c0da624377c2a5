/**
 * CPU accounting of a benchmark leg, from /proc: how much CPU the server under test used per request
 * (all its threads, and all its processes when given several), how much the load generator (this process) used, and how busy the whole machine
 * was. With the load generator on the same cores, these say whether a server was short of CPU or
 * waiting.
 */
import { readFileSync } from 'node:fs';

/** Linux reports process times in clock ticks of 1/100 s (USER_HZ) on every platform Node runs on. */
const TICK_US = 10_000;

/** User + system CPU of every thread of a process, in microseconds; null once it is gone. */
function processCpuUs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at state: utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_US;
  } catch {
    return null;
  }
}

/** Busy and total ticks of all CPUs (busy excludes idle and I/O wait). */
function machineTicks(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  const t = line.trim().split(/\s+/).slice(1).map(Number);
  const total = t.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: total - t[3]! - t[4]!, total };
}

export interface LegCpu {
  /** CPU of the server under test per request, all threads, µs. */
  serverUsPerRequest: number;
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
 * Starts measuring the server `pid` (or the processes `pids`, the server first); `stop(requests)`
 * gives the figures for the requests answered meanwhile.
 */
export function cpuMeter(pid: number | number[]): { stop(requests: number): LegCpu | null } {
  const pids = Array.isArray(pid) ? pid : [pid];
  const server = processesCpuUs(pids);
  const load = process.cpuUsage();
  const machine = machineTicks();
  return {
    stop(requests) {
      const serverEnd = processesCpuUs(pids);
      const loadUsed = process.cpuUsage(load);
      const machineEnd = machineTicks();
      if (server === null || serverEnd === null || requests <= 0) return null;
      const total = machineEnd.total - machine.total;
      return {
        serverUsPerRequest: Math.round((serverEnd - server) / requests),
        loadUsPerRequest: Math.round((loadUsed.user + loadUsed.system) / requests),
        machineBusyPercent: total > 0 ? Math.round((100 * (machineEnd.busy - machine.busy)) / total) : 0,
      };
    },
  };
}
