import { api, type ListOf, type ProfileRule } from '../api.js';
import { clear, h } from '../dom.js';
import { checkRuleRecord } from './rule-check.js';
import { actionsCell, errorText, saveRecord, type View } from './view.js';

const TEMPLATE = {
  id: 'purchases',
  name: 'Purchases add up',
  enabled: true,
  event_type: 'purchase',
  source_id: null,
  operations: [
    { op: 'increment', path: 'traits.public.lifetime_value', from: 'properties.price' },
    { op: 'increment', path: 'traits.public.orders' },
    { op: 'add_segment', value: 'customers' },
  ],
};

/** Profile rules: list in the order they apply, edit the JSON record with live checks, enable or disable, delete. */
export const rulesView: View = (root, { flash }) => {
  const rows = h('tbody');
  const editorTitle = h('h2', { id: 'rule-editor-title' }, 'New rule');
  const textarea = h('textarea', {
    id: 'rule-json',
    rows: 22,
    spellcheck: false,
    'aria-label': 'Profile rule (JSON)',
  });
  const problems = h('ul', { id: 'rule-errors', className: 'problems' });
  const save = h('button', { type: 'submit', id: 'rule-save' }, 'Save');

  function check(): void {
    const { errors } = checkRuleRecord(textarea.value);
    clear(problems);
    for (const e of errors) problems.append(h('li', {}, e));
    if (errors.length === 0) problems.append(h('li', { className: 'ok' }, 'Looks valid.'));
    textarea.classList.toggle('invalid', errors.length > 0);
    save.disabled = errors.length > 0;
  }

  function edit(rule: ProfileRule | null): void {
    editorTitle.textContent = rule ? `Edit ${rule.name || rule.id}` : 'New rule';
    textarea.value = JSON.stringify(rule ?? TEMPLATE, null, 2);
    check();
    textarea.focus();
  }

  const put = (rule: unknown, done: string) =>
    saveRecord<ProfileRule>('/profile-rule', rule, done, { flash, problems, after: load });

  async function load(): Promise<void> {
    try {
      const list = await api.get<ListOf<ProfileRule>>('/profile-rules');
      clear(rows);
      if (list.result.length === 0) {
        rows.append(h('tr', {}, h('td', { colSpan: 3, className: 'muted' }, 'No profile rules yet.')));
      }
      for (const rule of list.result) rows.append(row(rule));
    } catch (error) {
      flash(`Could not load rules: ${errorText(error)}`, 'error');
    }
  }

  function row(rule: ProfileRule): HTMLTableRowElement {
    const { enabled } = rule;
    return h(
      'tr',
      { 'data-id': rule.id, className: enabled ? '' : 'disabled' },
      h(
        'td',
        {},
        h('strong', {}, rule.name || rule.id),
        h('div', { className: 'muted mono' }, rule.id),
        h('div', {}, h('span', { className: 'tag' }, rule.event_type)),
        rule.source_id ? h('div', { className: 'muted' }, `source ${rule.source_id}`) : null,
        h('span', { className: `badge ${enabled ? 'on' : 'off'}` }, enabled ? 'enabled' : 'disabled'),
      ),
      h(
        'td',
        { className: 'mono' },
        h(
          'ul',
          { className: 'plain' },
          rule.operations.map((op) => h('li', {}, `${op.op} ${op.path ?? op.type ?? ''}`.trim())),
        ),
      ),
      actionsCell({
        edit: () => edit(rule),
        enabled,
        toggle: () =>
          void put(
            { ...rule, enabled: !enabled },
            `Rule ${rule.name || rule.id} ${enabled ? 'disabled' : 'enabled'}.`,
          ),
        confirmDelete: `Delete the rule ${rule.name || rule.id}?`,
        remove: () => api.delete(`/profile-rule/${encodeURIComponent(rule.id)}`).then(() => undefined),
        deleted: `Rule ${rule.name || rule.id} deleted.`,
        flash,
        after: load,
      }),
    );
  }

  textarea.addEventListener('input', check);
  const form = h(
    'form',
    {
      id: 'rule-form',
      onsubmit: async (event) => {
        event.preventDefault();
        const { errors, value } = checkRuleRecord(textarea.value);
        if (errors.length > 0 || !value) return check();
        const saved = await put(value, `Rule ${String(value.name || value.id || value.event_type)} saved.`);
        if (saved) {
          editorTitle.textContent = `Edit ${saved.name || saved.id}`;
          textarea.value = JSON.stringify(saved, null, 2);
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
        { type: 'button', className: 'secondary', id: 'rule-new', onclick: () => edit(null) },
        'New rule',
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
        h('div', { className: 'card-head' }, h('h2', {}, 'Profile rules')),
        h(
          'p',
          { className: 'muted' },
          'Each enabled rule changes the profile behind every event of its type (and source), in the order listed: traits, consents, interests, segments, identities.',
        ),
        h(
          'table',
          { className: 'grid', id: 'rules' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ['Rule', 'Operations', ''].map((t) => h('th', {}, t)),
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
