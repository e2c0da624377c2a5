import { api, ApiError, query, type RejectedRecord, type ValidationFailure } from '../api.js';
import { clear, formatTime, h } from '../dom.js';
import { errorText, poll, type View } from './view.js';

const REFRESH_MS = 3000;

function reasons(errors: ValidationFailure[]): HTMLUListElement {
  return h(
    'ul',
    { className: 'reasons' },
    errors.map((e) =>
      h('li', {}, h('span', { className: 'tag' }, e.type), ` event #${e.event} · ${e.target}: ${e.reason}`),
    ),
  );
}

/** The quarantine of requests refused by validation, with their reasons and a replay button. */
export const rejectedView: View = (root, { flash }) => {
  const rows = h('tbody');
  const type = h('input', {
    id: 'rejected-type',
    placeholder: 'Event type',
    'aria-label': 'Event type',
    spellcheck: false,
  });
  const status = h('span', { className: 'muted', id: 'rejected-status' });
  const open = new Set<string>();
  /** Records whose replay was refused again in this page (their stored reasons are the new ones). */
  const stillFailing = new Set<string>();

  function row(record: RejectedRecord): HTMLTableRowElement[] {
    const failures = record.errors;
    const details = h(
      'tr',
      { className: 'details', hidden: !open.has(record.id) },
      h('td', { colSpan: 5 }, h('pre', {}, JSON.stringify(record.request, null, 2))),
    );
    const replay = h(
      'button',
      {
        type: 'button',
        className: 'replay',
        onclick: async () => {
          replay.disabled = true;
          try {
            await api.post(`/event/rejected/${encodeURIComponent(record.id)}/replay`);
            stillFailing.delete(record.id);
            flash(`Replayed: the request was accepted and its events stored.`);
          } catch (error) {
            if (error instanceof ApiError && error.status === 406) {
              // The service keeps the record with the reasons of this replay: the list shows them.
              stillFailing.add(record.id);
              flash(`Still refused: ${error.message}`, 'error');
            } else flash(`Replay failed: ${errorText(error)}`, 'error');
          }
          await refresh();
        },
      },
      'Replay',
    );
    const main = h(
      'tr',
      { 'data-id': record.id, className: stillFailing.has(record.id) ? 'failing' : '' },
      h('td', { title: record.time }, formatTime(record.time, true)),
      h('td', {}, record.source_id, h('div', { className: 'muted' }, `/${record.endpoint}`)),
      h(
        'td',
        {},
        record.event_types.map((t) => h('span', { className: 'tag' }, t)),
      ),
      h('td', {}, reasons(failures)),
      h(
        'td',
        { className: 'actions' },
        replay,
        h(
          'button',
          {
            type: 'button',
            className: 'secondary',
            onclick: () => {
              details.hidden = !details.hidden;
              if (details.hidden) open.delete(record.id);
              else open.add(record.id);
            },
          },
          'Payload',
        ),
      ),
    );
    return [main, details];
  }

  async function refresh(): Promise<void> {
    try {
      const page = await api.get<{ result: RejectedRecord[]; next: string | null }>(
        `/event/rejected${query({ event_type: type.value.trim(), limit: 100 })}`,
      );
      clear(rows);
      for (const record of page.result) rows.append(...row(record));
      if (page.result.length === 0) {
        rows.append(h('tr', {}, h('td', { colSpan: 5, className: 'muted' }, 'The quarantine is empty.')));
      }
      status.textContent = `${page.result.length}${page.next ? '+' : ''} rejected · updated ${new Date().toLocaleTimeString()}`;
    } catch (error) {
      status.textContent = `Could not load the quarantine: ${errorText(error)}`;
    }
  }

  root.append(
    h(
      'section',
      { className: 'card' },
      h('div', { className: 'card-head' }, h('h2', {}, 'Quarantine'), status),
      h(
        'p',
        { className: 'muted' },
        'Requests refused by a validation schema, with the reasons. Fix the schema, then replay: an accepted replay stores the events and leaves the quarantine.',
      ),
      h(
        'form',
        {
          className: 'filters',
          onsubmit: (event) => {
            event.preventDefault();
            void refresh();
          },
        },
        type,
        h('button', { type: 'submit' }, 'Filter'),
      ),
      h(
        'table',
        { className: 'grid', id: 'rejected' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['Time', 'Source', 'Types', 'Reasons', ''].map((t) => h('th', {}, t)),
          ),
        ),
        rows,
      ),
    ),
  );
  return poll(refresh, REFRESH_MS);
};
