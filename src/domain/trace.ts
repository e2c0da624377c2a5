import { performance } from 'node:perf_hooks';

export interface LogEntry {
  level: 'debug' | 'info' | 'warning' | 'error';
  module: string;
  message: string;
}

export interface StepTiming {
  step: string;
  duration_ms: number;
}

export interface EventExecution {
  id: string;
  type: string;
  saved: boolean;
  /** Why the event was not stored, when it was not. */
  skipped?: string;
  validation: 'no schema' | 'passed';
  /** The profile rules applied to the event, in order. */
  rules?: { id: string; name: string }[];
  duration_ms: number;
}

/** A merge made while committing: `merged` became an alias of `into`. */
export interface MergeExecution {
  merged: string;
  into: string;
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;

/**
 * What the pipeline did for one request, for the `debugging` object of docs/api.md#debugging. A disabled trace
 * records nothing, so production requests pay nothing for it.
 */
export class Trace {
  readonly logs: LogEntry[] = [];
  readonly steps: StepTiming[] = [];
  readonly events: EventExecution[] = [];
  readonly merges: MergeExecution[] = [];
  private readonly started = performance.now();
  private mark = this.started;

  constructor(readonly enabled: boolean) {}

  log(level: LogEntry['level'], module: string, message: string): void {
    if (this.enabled) this.logs.push({ level, module, message });
  }

  /** Closes the current step: its duration runs from the previous step's end. */
  step(name: string): void {
    if (!this.enabled) return;
    const now = performance.now();
    this.steps.push({ step: name, duration_ms: round(now - this.mark) });
    this.mark = now;
  }

  event(execution: Omit<EventExecution, 'duration_ms'>, startedAt: number): void {
    if (this.enabled) this.events.push({ ...execution, duration_ms: round(performance.now() - startedAt) });
  }

  execution() {
    return {
      duration_ms: round(performance.now() - this.started),
      steps: this.steps,
      events: this.events,
      merges: this.merges,
    };
  }
}
