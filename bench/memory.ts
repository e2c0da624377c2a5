/**
 * Memory of a server under test, from /proc: its RSS now, its peak, and samples over a leg. A
 * server of several processes (the first one's descendants) counts the sum of theirs.
 */
import { readFileSync } from 'node:fs';

/** VmRSS and VmHWM (peak RSS over the process lifetime) in MB; null once the process is gone. */
function processMemory(pid: number): { rss: number; hwm: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
  } catch {
    return null;
  }
}

/** Of `pids`, the sum of RSS and of VmHWM in MB; null once the first process is gone. */
export function memory(pids: number[]): { rss: number; hwm: number } | null {
  const [first, ...others] = pids.map(processMemory);
  if (!first) return null;
  return others.reduce<{ rss: number; hwm: number }>(
    (total, m) => (m ? { rss: total.rss + m.rss, hwm: total.hwm + m.hwm } : total),
    first,
  );
}

export interface RssSample {
  /** Seconds since sampling started. */
  t: number;
  rss: number;
}

/** Samples a process's RSS at an interval until stopped; returns the peak and the samples. */
export function sampleRss(pids: number[], intervalMs: number, onSample?: (rss: number) => void) {
  const samples: RssSample[] = [];
  const started = Date.now();
  const take = () => {
    const m = memory(pids);
    if (m) {
      samples.push({ t: (Date.now() - started) / 1000, rss: m.rss });
      onSample?.(m.rss);
    }
  };
  take();
  const timer = setInterval(take, intervalMs);
  return {
    samples,
    stop() {
      clearInterval(timer);
      take();
      const peak = Math.max(...samples.map((s) => s.rss));
      return { peak, hwm: memory(pids)?.hwm ?? NaN, samples };
    },
  };
}
