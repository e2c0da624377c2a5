import { api, ApiError } from '../api.js';
import { clear, h } from '../dom.js';

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

/** What the actions cell of a record's row does (schemas, rules). */
export interface RowActions {
  edit(): void;
  enabled: boolean;
  /** Saves the record enabled or disabled the other way. */
  toggle(): void;
  /** Asked before deleting. */
  confirmDelete: string;
  /** Deletes the record; `deleted` is flashed once it is. */
  remove(): Promise<void>;
  deleted: string;
  flash: ViewContext['flash'];
  /** Runs after a deletion (reloading the list). */
  after(): Promise<void>;
}

/** The cell with a record's Edit, Enable/Disable and Delete buttons. */
export function actionsCell(a: RowActions): HTMLElement {
  return h(
    'td',
    { className: 'actions' },
    h('button', { type: 'button', className: 'edit', onclick: () => a.edit() }, 'Edit'),
    h(
      'button',
      { type: 'button', className: 'toggle', onclick: () => a.toggle() },
      a.enabled ? 'Disable' : 'Enable',
    ),
    h(
      'button',
      {
        type: 'button',
        className: 'danger delete',
        onclick: async () => {
          if (!confirm(a.confirmDelete)) return;
          try {
            await a.remove();
            a.flash(a.deleted);
            await a.after();
          } catch (error) {
            a.flash(`Could not delete: ${errorText(error)}`, 'error');
          }
        },
      },
      'Delete',
    ),
  );
}

/**
 * Saves a record with `POST path` and runs `after` (reloading the list); when the service refuses
 * it, its reason is shown in `problems` (under the editor) and flashed. Null when not saved.
 */
export async function saveRecord<T>(
  path: string,
  record: unknown,
  done: string,
  ui: { flash: ViewContext['flash']; problems: HTMLElement; after(): Promise<void> },
): Promise<T | null> {
  try {
    const saved = await api.post<T>(path, record);
    ui.flash(done);
    await ui.after();
    return saved;
  } catch (error) {
    const detail = error instanceof ApiError ? error.message : errorText(error);
    clear(ui.problems);
    ui.problems.append(h('li', { className: 'server' }, `The service refused it: ${detail}`));
    ui.flash(`Not saved: ${detail}`, 'error');
    return null;
  }
}
