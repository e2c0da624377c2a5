import { api, type EventTypeRecord, type ListOf } from '../api.js';
import { clear, h } from '../dom.js';
import { checkSchemaRecord } from './schema-check.js';
import { actionsCell, errorText, saveRecord, type View } from './view.js';

/** The record a new schema starts from; its event type is renamed when one of that name exists. */
const TEMPLATE: EventTypeRecord = {
  event_type: 'new-event-type',
  name: 'New event type',
  description: 'Events of this type must carry a numeric price.',
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
  /** The event types that have a schema, as last listed. */
  let known = new Set<string>();

  /** The template, under an event type that has no schema yet. */
  function template(): EventTypeRecord {
    let eventType = TEMPLATE.event_type;
    for (let n = 2; known.has(eventType); n++) eventType = `${TEMPLATE.event_type}-${n}`;
    return { ...TEMPLATE, event_type: eventType };
  }

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
    textarea.value = JSON.stringify(record ?? template(), null, 2);
    check();
    textarea.focus();
  }

  const put = async (record: unknown, done: string) =>
    (await saveRecord('/event/management', record, done, { flash, problems, after: load })) !== null;

  async function load(): Promise<void> {
    try {
      const list = await api.get<ListOf<EventTypeRecord>>('/event/management');
      known = new Set(list.result.map((r) => r.event_type));
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
      actionsCell({
        edit: () => edit(record),
        enabled,
        toggle: () =>
          void put(
            { ...record, validation: { ...record.validation, enabled: !enabled } },
            `Schema of ${record.event_type} ${enabled ? 'disabled' : 'enabled'}.`,
          ),
        confirmDelete: `Delete the schema of ${record.event_type}?`,
        remove: async () => {
          await api.delete(`/event/management/${encodeURIComponent(record.event_type)}`);
          if (editing === record.event_type) edit(null);
        },
        deleted: `Schema of ${record.event_type} deleted.`,
        flash,
        after: load,
      }),
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
        const eventType = String(value.event_type);
        // Saving replaces the schema of that type: never without asking, unless it is the one edited.
        if (eventType !== editing && known.has(eventType)) {
          if (!confirm(`The event type ${eventType} already has a schema. Replace it with this one?`)) {
            flash(`Not saved: ${eventType} keeps its schema.`, 'error');
            return;
          }
        }
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
  // The template's event type is chosen once the existing ones are known.
  void load().then(() => edit(null));
};
