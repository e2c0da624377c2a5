import { api, type DestinationRecord, type FailedBatch, type ListOf } from '../api.js';
import { clear, formatTime, h } from '../dom.js';
import { failedRows } from './destination-failed.js';
import { errorText, poll, type View } from './view.js';

const REFRESH_MS = 2000;

interface Status {
  delivered: number;
  pending: number;
  failing_since: string | null;
  last_error: string | null;
  failed: number;
}

type WithStatus = DestinationRecord & { status: Status };

const list = (text: string) =>
  text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

/**
 * Destinations: create, enable and disable, the status of each (delivered, pending, failing), and
 * its failed batches with a button that sends one again.
 */
export const destinationsView: View = (root, { flash }) => {
  const rows = h('tbody');
  const open = new Set<string>();
  const input = (name: string, placeholder: string, extra: Record<string, string | boolean> = {}) =>
    h('input', { name, id: `destination-${name}`, placeholder, spellcheck: false, ...extra });
  const id = input('id', 'id (generated when empty)');
  const name = input('name', 'Name');
  const url = input('url', 'https://receiver.example/hook', { required: true });
  const types = input('event_types', 'event types, comma-separated (all when empty)');
  const sources = input('source_ids', 'source ids, comma-separated (all when empty)');
  const secretBox = h('p', { className: 'muted', id: 'destination-secret', hidden: true });

  async function load(): Promise<void> {
    try {
      const all = await api.get<ListOf<DestinationRecord>>('/destinations');
      const detailed = await Promise.all(
        all.result.map((d) => api.get<WithStatus>(`/destination/${encodeURIComponent(d.id)}`)),
      );
      const failed = await Promise.all(
        detailed.map((d) =>
          open.has(d.id)
            ? api.get<{ result: FailedBatch[] }>(`/destination/${encodeURIComponent(d.id)}/failed?limit=20`)
            : Promise.resolve(null),
        ),
      );
      clear(rows);
      if (detailed.length === 0) {
        rows.append(
          h('tr', {}, h('td', { colSpan: 5, className: 'muted' }, 'No destinations yet: create one.')),
        );
      }
      detailed.forEach((d, i) => rows.append(...row(d, failed[i]?.result ?? null)));
    } catch (error) {
      flash(`Could not load destinations: ${errorText(error)}`, 'error');
    }
  }

  async function save(body: Record<string, unknown>, done: string): Promise<DestinationRecord | null> {
    try {
      const saved = await api.post<DestinationRecord>('/destination', body);
      flash(done);
      await load();
      return saved;
    } catch (error) {
      flash(`Could not save the destination: ${errorText(error)}`, 'error');
      return null;
    }
  }

  function row(d: WithStatus, batches: FailedBatch[] | null): HTMLTableRowElement[] {
    const { status } = d;
    const failing = status.failing_since !== null;
    const main = h(
      'tr',
      { 'data-id': d.id, className: failing ? 'failing' : d.enabled ? '' : 'disabled' },
      h('td', { className: 'mono' }, d.id),
      h(
        'td',
        {},
        h('strong', {}, d.name || d.url),
        h('div', { className: 'muted mono' }, d.url),
        h(
          'div',
          { className: 'muted' },
          d.event_types.length ? `types: ${d.event_types.join(', ')}` : 'every type',
          ' · ',
          d.source_ids.length ? `sources: ${d.source_ids.join(', ')}` : 'every source',
        ),
      ),
      h(
        'td',
        {},
        h('span', { className: `badge ${d.enabled ? 'on' : 'off'}` }, d.enabled ? 'enabled' : 'disabled'),
        failing ? h('span', { className: 'badge failing' }, 'failing') : null,
      ),
      h(
        'td',
        { className: 'status' },
        h('div', {}, 'delivered ', h('strong', { className: 'delivered' }, String(status.delivered))),
        h('div', {}, 'pending ', h('strong', { className: 'pending' }, String(status.pending))),
        failing
          ? h('div', { className: 'error' }, `failing since ${formatTime(status.failing_since, true)}`)
          : null,
        status.last_error
          ? h('div', { className: 'muted last-error' }, `last error: ${status.last_error}`)
          : null,
      ),
      h(
        'td',
        { className: 'actions' },
        h(
          'button',
          {
            type: 'button',
            className: 'toggle',
            onclick: () =>
              void save(
                { ...d, status: undefined, enabled: !d.enabled },
                `Destination ${d.id} ${d.enabled ? 'disabled' : 'enabled'}.`,
              ),
          },
          d.enabled ? 'Disable' : 'Enable',
        ),
        h(
          'button',
          {
            type: 'button',
            className: 'secondary show-failed',
            onclick: async () => {
              if (open.has(d.id)) open.delete(d.id);
              else open.add(d.id);
              await load();
            },
          },
          `Failed batches (${status.failed})`,
        ),
        h(
          'button',
          {
            type: 'button',
            className: 'secondary delete',
            onclick: async () => {
              if (!confirm(`Delete the destination ${d.id} and its failed batches?`)) return;
              try {
                await api.delete(`/destination/${encodeURIComponent(d.id)}`);
                flash(`Destination ${d.id} deleted.`);
              } catch (error) {
                flash(`Could not delete ${d.id}: ${errorText(error)}`, 'error');
              }
              await load();
            },
          },
          'Delete',
        ),
      ),
    );
    return batches ? [main, failedRows(d.id, batches, { flash, reload: load })] : [main];
  }

  const form = h(
    'form',
    {
      className: 'inline-form',
      id: 'destination-form',
      onsubmit: async (event) => {
        event.preventDefault();
        const body: Record<string, unknown> = {
          name: name.value.trim(),
          url: url.value.trim(),
          event_types: list(types.value),
          source_ids: list(sources.value),
        };
        if (id.value.trim()) body.id = id.value.trim();
        const saved = await save(body, 'Destination saved.');
        if (saved) {
          form.reset();
          secretBox.textContent = `Signing secret of ${saved.id}: ${saved.secret} (receivers verify the webhook-signature with it).`;
          secretBox.hidden = false;
        }
      },
    },
    id,
    name,
    url,
    types,
    sources,
    h('button', { type: 'submit', id: 'destination-create' }, 'Create destination'),
  );

  root.append(
    h(
      'section',
      { className: 'card' },
      h('div', { className: 'card-head' }, h('h2', {}, 'Destinations')),
      h(
        'p',
        { className: 'muted' },
        'Every event stored after a destination is created, and matching it, is sent to its URL in signed batches, in order, at least once.',
      ),
      form,
      secretBox,
      h(
        'table',
        { className: 'grid', id: 'destinations' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['Id', 'Receiver', 'State', 'Delivery', ''].map((t) => h('th', {}, t)),
          ),
        ),
        rows,
      ),
    ),
  );
  return poll(load, REFRESH_MS);
};
