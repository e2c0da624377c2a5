import { api, ApiError, query, type EventPage, type ProfileRecord, type SessionRecord } from '../api.js';
import { compactJson, formatTime, h } from '../dom.js';
import { errorText, type View } from './view.js';

const MAX_SESSIONS = 20;

function json(value: unknown): HTMLPreElement {
  return h('pre', { className: 'json' }, JSON.stringify(value, null, 2));
}

function pick(record: Record<string, unknown>, path: string[]): unknown {
  let value: unknown = record;
  for (const key of path) value = (value as Record<string, unknown> | null)?.[key];
  return value;
}

const named = (name: string | null | undefined, version: string | null | undefined) =>
  name ? `${name}${version ? ` ${version}` : ''}` : '—';

/** What a session's first request said of its device, one cell each: type, system, browser, country. */
function deviceCells(session: SessionRecord | null): HTMLTableCellElement[] {
  return [
    h('td', { className: 'device' }, session?.device?.type ?? '—'),
    h('td', { className: 'os' }, named(session?.os?.name, session?.os?.version)),
    h(
      'td',
      { className: 'app' },
      named(session?.app?.name, session?.app?.version),
      session?.app?.bot ? h('span', { className: 'tag' }, 'bot') : null,
    ),
    h('td', { className: 'country' }, session?.device?.geo.country.code ?? '—'),
  ];
}

/** One profile: its traits, its sessions and the timeline of its events. */
export const profileView: View = (root, { params }) => {
  const id = params[0] ?? '';
  const input = h('input', {
    id: 'profile-id',
    placeholder: 'Profile id',
    'aria-label': 'Profile id',
    value: id,
    spellcheck: false,
  });
  const body = h('div', { id: 'profile-body' });
  root.append(
    h(
      'section',
      { className: 'card' },
      h('div', { className: 'card-head' }, h('h2', {}, 'Profile')),
      h(
        'form',
        {
          className: 'filters',
          onsubmit: (event) => {
            event.preventDefault();
            location.hash = `#/profile/${encodeURIComponent(input.value.trim())}`;
          },
        },
        input,
        h('button', { type: 'submit' }, 'Open'),
      ),
      h(
        'p',
        { className: 'muted' },
        'Open a profile from its id, or follow a profile link in the live events.',
      ),
    ),
    body,
  );
  if (id) void show(id, body);
};

async function show(id: string, body: HTMLElement): Promise<void> {
  body.append(h('p', { className: 'muted' }, 'Loading…'));
  let profile: ProfileRecord;
  let events: EventPage;
  try {
    [profile, events] = await Promise.all([
      api.get<ProfileRecord>(`/profile/${encodeURIComponent(id)}`),
      api.get<EventPage>(`/events${query({ profile_id: id, limit: 500 })}`),
    ]);
  } catch (error) {
    body.replaceChildren(
      h(
        'p',
        { className: 'error' },
        error instanceof ApiError && error.status === 404
          ? `No profile ${id}.`
          : `Could not load: ${errorText(error)}`,
      ),
    );
    return;
  }
  const sessionIds = [...new Set(events.result.map((e) => e.session?.id).filter((s): s is string => !!s))];
  const sessions = await Promise.all(
    sessionIds
      .slice(0, MAX_SESSIONS)
      .map((sid) => api.get<SessionRecord>(`/session/${encodeURIComponent(sid)}`).catch(() => null)),
  );
  const counts = new Map<string, number>();
  for (const e of events.result) if (e.session) counts.set(e.session.id, (counts.get(e.session.id) ?? 0) + 1);
  const visit = profile.metadata.time.visit;

  body.replaceChildren(
    h(
      'div',
      { className: 'columns' },
      h(
        'section',
        { className: 'card', id: 'profile-summary' },
        h('h3', {}, 'Summary'),
        h(
          'dl',
          {},
          h('dt', {}, 'Id'),
          h('dd', { className: 'mono', id: 'profile-summary-id' }, profile.id),
          h('dt', {}, 'Visits'),
          h('dd', { id: 'profile-visits' }, String(profile.stats.visits)),
          h('dt', {}, 'First seen'),
          h('dd', {}, formatTime(profile.metadata.time.insert, true)),
          h('dt', {}, 'Current visit'),
          h('dd', {}, formatTime(visit?.current, true) || '—'),
          h('dt', {}, 'Previous visit'),
          h('dd', {}, formatTime(visit?.last, true) || '—'),
          h('dt', {}, 'Segments'),
          h('dd', {}, profile.segments.join(', ') || '—'),
        ),
      ),
      h(
        'section',
        { className: 'card', id: 'profile-traits' },
        h('h3', {}, 'Traits'),
        json(profile.traits.public),
        h('h3', {}, 'Consents'),
        json(profile.consents),
        h('h3', {}, 'Interests'),
        json(profile.interests),
      ),
    ),
    h(
      'section',
      { className: 'card' },
      h('h3', {}, `Sessions (${sessionIds.length})`),
      h(
        'table',
        { className: 'grid', id: 'profile-sessions' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            [
              'Session',
              'Started',
              'Last activity',
              'Events',
              'Device',
              'System',
              'Browser',
              'Country',
              'Landing page',
            ].map((t) => h('th', {}, t)),
          ),
        ),
        h(
          'tbody',
          {},
          sessions.map((s, i) =>
            h(
              'tr',
              { 'data-id': sessionIds[i] ?? '' },
              h('td', { className: 'mono' }, sessionIds[i] ?? ''),
              h('td', {}, formatTime(s?.metadata.time.insert, true)),
              h('td', {}, formatTime(s?.metadata.time.update, true)),
              h('td', {}, String(counts.get(sessionIds[i] ?? '') ?? 0)),
              ...deviceCells(s),
              h('td', { className: 'mono' }, String(s ? (pick(s.context, ['page', 'url']) ?? '') : '')),
            ),
          ),
        ),
      ),
    ),
    h(
      'p',
      { className: 'muted attribution' },
      'Countries: ',
      h('a', { href: 'https://db-ip.com', rel: 'noopener', target: '_blank' }, 'IP Geolocation by DB-IP'),
    ),
    h(
      'section',
      { className: 'card' },
      h('h3', {}, `Events timeline (${events.result.length}${events.next ? '+' : ''})`),
      h(
        'ol',
        { className: 'timeline', id: 'profile-timeline' },
        events.result.map((e) =>
          h(
            'li',
            { 'data-type': e.type },
            h('time', { datetime: e.metadata.time.insert }, formatTime(e.metadata.time.insert, true)),
            h('span', { className: 'tag' }, e.type),
            h('span', { className: 'mono props' }, compactJson(e.properties)),
          ),
        ),
      ),
    ),
  );
}
