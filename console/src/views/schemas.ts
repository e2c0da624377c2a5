import { api, ApiError, type EventTypeRecord, type ListOf } from '../api.js';
import { clear, h } from '../dom.js';
import { checkSchemaRecord } from './schema-check.js';
import { errorText, type View } from './view.js';

const TEMPLATE: EventTypeRecord = {
  event_type: 'purchase',
  name: 'Purchase',
  description: 'Purchases must carry a numeric price.',
  tags: [],
  validation: {
    enabled: true,
    json_schema: {
      'event@properties': {
        type: 'object',
        properties: { price: { type: 'number' } },
        required: ['price'],
      },
    },
  },
};

/** Validation schemas: list, edit the JSON record with live errors, enable or disable, delete. */
export const schemasView: View = (root, { flash }) => {
  const rows = h('tbody');
  const editorTitle = h('h2', { id: 'schema-editor-title' }, 'New schema');
  const textarea = h('textarea', {
    id: 'schema-json',
    rows: 22,
    spellcheck: false,
    'aria-label': 'Validation schema record (JSON)',
  });
  const problems = h('ul', { id: 'schema-errors', className: 'problems' });
  const save = h('button', { type: 'submit', id: 'schema-save' }, 'Save');
  let editing: string | null = null;

  function check(): void {
    const { errors } = checkSchemaRecord(textarea.value);
    clear(problems);
    for (const e of errors) problems.append(h('li', {}, e));
    if (errors.length === 0) problems.append(h('li', { className: 'ok' }, 'Looks valid.'));
    textarea.classList.toggle('invalid', errors.length > 0);
    save.disabled = errors.length > 0;
  }

  function edit(record: EventTypeRecord | null): void {
    editing = record?.event_type ?? null;
    editorTitle.textContent = record ? `Edit ${record.event_type}` : 'New schema';
    textarea.value = JSON.stringify(record ?? TEMPLATE, null, 2);
    check();
    textarea.focus();
  }

  async function put(record: unknown, done: string): Promise<boolean> {
    try {
      await api.post('/event/management', record);
      flash(done);
      await load();
      return true;
    } catch (error) {
      const detail = error instanceof ApiError ? error.message : errorText(error);
      clear(problems);
      problems.append(h('li', { className: 'server' }, `The service refused it: ${detail}`));
      flash(`Not saved: ${detail}`, 'error');
      return false;
    }
  }

  async function load(): Promise<void> {
    try {
      const list = await api.get<ListOf<EventTypeRecord>>('/event/management');
      clear(rows);
      if (list.result.length === 0) {
        rows.append(h('tr', {}, h('td', { colSpan: 4, className: 'muted' }, 'No validation schemas yet.')));
      }
      for (const record of list.result) rows.append(row(record));
    } catch (error) {
      flash(`Could not load schemas: ${errorText(error)}`, 'error');
    }
  }

  function row(record: EventTypeRecord): HTMLTableRowElement {
    const enabled = record.validation.enabled;
    return h(
      'tr',
      { 'data-type': record.event_type, className: enabled ? '' : 'disabled' },
      h(
        'td',
        {},
        h('span', { className: 'tag' }, record.event_type),
        h('div', { className: 'muted' }, record.name),
      ),
      h('td', { className: 'mono' }, Object.keys(record.validation.json_schema).join(', ') || '—'),
      h(
        'td',
        {},
        h('span', { className: `badge ${enabled ? 'on' : 'off'}` }, enabled ? 'enabled' : 'disabled'),
      ),
      h(
        'td',
        { className: 'actions' },
        h('button', { type: 'button', className: 'edit', onclick: () => edit(record) }, 'Edit'),
        h(
          'button',
          {
            type: 'button',
            className: 'toggle',
            onclick: () =>
              put(
                { ...record, validation: { ...record.validation, enabled: !enabled } },
                `Schema of ${record.event_type} ${enabled ? 'disabled' : 'enabled'}.`,
              ),
          },
          enabled ? 'Disable' : 'Enable',
        ),
        h(
          'button',
          {
            type: 'button',
            className: 'danger delete',
            onclick: async () => {
              if (!confirm(`Delete the schema of ${record.event_type}?`)) return;
              try {
                await api.delete(`/event/management/${encodeURIComponent(record.event_type)}`);
                flash(`Schema of ${record.event_type} deleted.`);
                if (editing === record.event_type) edit(null);
                await load();
              } catch (error) {
                flash(`Could not delete: ${errorText(error)}`, 'error');
              }
            },
          },
          'Delete',
        ),
      ),
    );
  }

  textarea.addEventListener('input', check);
  const form = h(
    'form',
    {
      id: 'schema-form',
      onsubmit: async (event) => {
        event.preventDefault();
        const { errors, value } = checkSchemaRecord(textarea.value);
        if (errors.length > 0 || !value) return check();
        const saved = await put(value, `Schema of ${String(value.event_type)} saved.`);
        if (saved) {
          editing = String(value.event_type);
          editorTitle.textContent = `Edit ${editing}`;
        }
      },
    },
    textarea,
    problems,
    h(
      'div',
      { className: 'buttons' },
      save,
      h(
        'button',
        { type: 'button', className: 'secondary', id: 'schema-new', onclick: () => edit(null) },
        'New schema',
      ),
    ),
  );

  root.append(
    h(
      'div',
      { className: 'columns' },
      h(
        'section',
        { className: 'card' },
        h('div', { className: 'card-head' }, h('h2', {}, 'Validation schemas')),
        h(
          'p',
          { className: 'muted' },
          'Events of a type with an enabled schema must satisfy it; the service refuses them (406) otherwise and keeps them in the quarantine.',
        ),
        h(
          'table',
          { className: 'grid', id: 'schemas' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ['Event type', 'Targets', 'State', ''].map((t) => h('th', {}, t)),
            ),
          ),
          rows,
        ),
      ),
      h('section', { className: 'card' }, h('div', { className: 'card-head' }, editorTitle), form),
    ),
  );
  edit(null);
  void load();
};
