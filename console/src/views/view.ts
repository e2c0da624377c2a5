export interface ViewContext {
  /** Path segments after the view's own (`#/profile/<id>` gives `[id]`). */
  params: string[];
  flash(message: string, kind?: 'ok' | 'error'): void;
}

/** Renders into its element; may return a cleanup (stopping timers) run when the view is left. */
export type View = (root: HTMLElement, context: ViewContext) => (() => void) | void;

/** Runs `task` now and every `ms`, never two at once; returns the stop function. */
export function poll(task: () => Promise<void>, ms: number): () => void {
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const run = async () => {
    if (stopped) return;
    try {
      await task();
    } finally {
      if (!stopped) timer = setTimeout(run, ms);
    }
  };
  void run();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
