import { api, ApiError, query, type EventPage, type ProfileRecord, type SessionRecord } from '../api.js';
import { compactJson, formatTime, h } from '../dom.js';
import { errorText, poll, type View } from './view.js';

const MAX_SESSIONS = 20;
/** How often an open profile is read again, so that it follows the events as they arrive. */
const REFRESH_MS = 2000;

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

/**
 * One profile: its traits, identities, segments, consents and merge history, its sessions and the
 * timeline of its events, read again every few seconds while it is open.
 */
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
  if (!id) return;
  body.append(h('p', { className: 'muted' }, 'Loading…'));
  let shown = '';
  return poll(async () => {
    shown = await show(id, body, shown);
  }, REFRESH_MS);
};

/** Renders the profile when it differs from what is shown; answers what is shown now. */
async function show(id: string, body: HTMLElement, shown: string): Promise<string> {
  let profile: ProfileRecord;
  let events: EventPage;
  try {
    // An id merged into another answers the survivor: its events are listed by the survivor's id.
    profile = await api.get<ProfileRecord>(`/profile/${encodeURIComponent(id)}`);
    events = await api.get<EventPage>(`/events${query({ profile_id: profile.id, limit: 500 })}`);
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
    return '';
  }
  const state = JSON.stringify([profile, events.result.map((e) => e.id)]);
  if (state === shown) return shown;
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
    profile.id === id
      ? ''
      : h(
          'p',
          { className: 'muted', id: 'profile-alias' },
          `${id} was merged into this profile: `,
          h('a', { href: `#/profile/${encodeURIComponent(profile.id)}` }, profile.id),
        ),
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
          h(
            'dd',
            { id: 'profile-segments' },
            profile.segments.length
              ? profile.segments.map((segment) =>
                  h('span', { className: 'tag', 'data-segment': String(segment) }, String(segment)),
                )
              : '—',
          ),
          h('dt', {}, 'Identities'),
          h(
            'dd',
            { id: 'profile-ids' },
            profile.ids.length
              ? h(
                  'ul',
                  { className: 'plain' },
                  profile.ids.map((identity) =>
                    h(
                      'li',
                      { 'data-type': identity.type },
                      h('span', { className: 'muted' }, `${identity.type} `),
                      identity.value,
                    ),
                  ),
                )
              : '—',
          ),
          h('dt', {}, 'Merged in'),
          h(
            'dd',
            { id: 'profile-merged' },
            profile.merged.length
              ? h(
                  'ul',
                  { className: 'plain' },
                  profile.merged.map((m) =>
                    h('li', { className: 'mono', 'data-id': m.id }, `${m.id} · ${formatTime(m.time, true)}`),
                  ),
                )
              : '—',
          ),
        ),
      ),
      h(
        'section',
        { className: 'card', id: 'profile-traits' },
        h('h3', {}, 'Public traits'),
        h('div', { id: 'profile-traits-public' }, json(profile.traits.public)),
        h('h3', {}, 'Private traits'),
        h('div', { id: 'profile-traits-private' }, json(profile.traits.private)),
        h('h3', {}, 'Consents'),
        h('div', { id: 'profile-consents' }, json(profile.consents)),
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
  return state;
}
