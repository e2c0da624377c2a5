import { api, type FailedBatch } from '../api.js';
import { formatTime, h } from '../dom.js';
import { errorText, type ViewContext } from './view.js';

/** The failed batches of a destination, each with a button that sends it again. */
export function failedRows(
  id: string,
  batches: FailedBatch[],
  { flash, reload }: { flash: ViewContext['flash']; reload: () => Promise<void> },
): HTMLTableRowElement {
  const items = batches.map((b) =>
    h(
      'li',
      { 'data-batch': b.batch_id },
      h('span', { className: 'mono' }, b.batch_id),
      ` · ${b.events} events · ${formatTime(b.failed_at, true)} · ${b.attempts} attempts · `,
      h('span', { className: 'error' }, b.error),
      ' ',
      h(
        'button',
        {
          type: 'button',
          className: 'retry',
          onclick: async () => {
            try {
              const outcome = await api.post<{ delivered: boolean; error: string | null }>(
                `/destination/${encodeURIComponent(id)}/failed/${encodeURIComponent(b.batch_id)}/retry`,
              );
              if (outcome.delivered) flash(`Batch ${b.batch_id} delivered.`);
              else flash(`Batch ${b.batch_id} failed again: ${outcome.error}`, 'error');
            } catch (error) {
              flash(`Retry failed: ${errorText(error)}`, 'error');
            }
            await reload();
          },
        },
        'Retry',
      ),
    ),
  );
  return h(
    'tr',
    { className: 'details', 'data-failed-of': id },
    h(
      'td',
      { colSpan: 5 },
      items.length
        ? h('ul', { className: 'failed-batches' }, items)
        : h('span', { className: 'muted' }, 'No failed batches.'),
    ),
  );
}
