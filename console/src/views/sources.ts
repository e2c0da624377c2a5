import { api, type ListOf, type SourceRecord } from '../api.js';
import { clear, h } from '../dom.js';
import { errorText, type View } from './view.js';

/** Event sources: list, create, enable and disable; each with the script tag that embeds the tracker. */
export const sourcesView: View = (root, { flash }) => {
  const rows = h('tbody');
  const id = h('input', {
    name: 'id',
    id: 'source-id',
    placeholder: 'id (generated when empty)',
    spellcheck: false,
  });
  const name = h('input', { name: 'name', id: 'source-name', placeholder: 'Name' });
  const description = h('input', {
    name: 'description',
    id: 'source-description',
    placeholder: 'Description',
  });

  async function load(): Promise<void> {
    try {
      const list = await api.get<ListOf<SourceRecord>>('/event-sources');
      clear(rows);
      if (list.result.length === 0) {
        rows.append(
          h('tr', {}, h('td', { colSpan: 5, className: 'muted' }, 'No event sources yet: create one.')),
        );
      }
      for (const source of list.result) rows.append(row(source));
    } catch (error) {
      flash(`Could not load event sources: ${errorText(error)}`, 'error');
    }
  }

  function row(source: SourceRecord): HTMLTableRowElement {
    const snippet = `<script src="${location.origin}/tracker.js" data-source="${source.id}" async></script>`;
    const flags = [
      source.transitional && 'transitional',
      source.consent && 'consent',
      !source.returns_profile && 'no profile',
    ].filter(Boolean);
    return h(
      'tr',
      { 'data-id': source.id, className: source.enabled ? '' : 'disabled' },
      h('td', { className: 'mono' }, source.id),
      h(
        'td',
        {},
        h('strong', {}, source.name),
        source.description ? h('div', { className: 'muted' }, source.description) : null,
      ),
      h(
        'td',
        {},
        h(
          'span',
          { className: `badge ${source.enabled ? 'on' : 'off'}` },
          source.enabled ? 'enabled' : 'disabled',
        ),
        flags.map((f) => h('span', { className: 'badge' }, String(f))),
      ),
      h(
        'td',
        {},
        h('code', { className: 'snippet' }, snippet),
        ' ',
        h(
          'a',
          { href: `/demo?source=${encodeURIComponent(source.id)}`, target: '_blank', rel: 'noopener' },
          'demo page',
        ),
      ),
      h(
        'td',
        {},
        h(
          'button',
          {
            type: 'button',
            className: 'toggle',
            onclick: async () => {
              try {
                await api.post('/event-source', { ...source, enabled: !source.enabled });
                flash(`Source ${source.id} ${source.enabled ? 'disabled' : 'enabled'}.`);
                await load();
              } catch (error) {
                flash(`Could not update ${source.id}: ${errorText(error)}`, 'error');
              }
            },
          },
          source.enabled ? 'Disable' : 'Enable',
        ),
      ),
    );
  }

  const form = h(
    'form',
    {
      className: 'inline-form',
      id: 'source-form',
      onsubmit: async (event) => {
        event.preventDefault();
        const body: Record<string, unknown> = {
          name: name.value.trim(),
          description: description.value.trim(),
        };
        if (id.value.trim()) body.id = id.value.trim();
        try {
          const created = await api.post<SourceRecord>('/event-source', body);
          flash(`Source ${created.id} saved.`);
          form.reset();
          await load();
        } catch (error) {
          flash(`Could not create the source: ${errorText(error)}`, 'error');
        }
      },
    },
    id,
    name,
    description,
    h('button', { type: 'submit', id: 'source-create' }, 'Create source'),
  );

  root.append(
    h(
      'section',
      { className: 'card' },
      h('div', { className: 'card-head' }, h('h2', {}, 'Event sources')),
      h(
        'p',
        { className: 'muted' },
        'Trackers send events under a source id. Creating a source with an existing id replaces it.',
      ),
      form,
      h(
        'table',
        { className: 'grid', id: 'sources' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['Id', 'Name', 'State', 'Embed', ''].map((t) => h('th', {}, t)),
          ),
        ),
        rows,
      ),
    ),
  );
  void load();
};
