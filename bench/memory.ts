/** Memory of a server under test, from /proc: its RSS now, its peak, and samples over a leg. */
import { readFileSync } from 'node:fs';

/** VmRSS and VmHWM (peak RSS over the process lifetime) in MB; null once the process is gone. */
export function memory(pid: number): { rss: number; hwm: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
  } catch {
    return null;
  }
}

export interface RssSample {
  /** Seconds since sampling started. */
  t: number;
  rss: number;
}

/** Samples a process's RSS at an interval until stopped; returns the peak and the samples. */
export function sampleRss(pid: number, intervalMs: number, onSample?: (rss: number) => void) {
  const samples: RssSample[] = [];
  const started = Date.now();
  const take = () => {
    const m = memory(pid);
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
      return { peak, hwm: memory(pid)?.hwm ?? NaN, samples };
    },
  };
}
