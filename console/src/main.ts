import './style.css';
import { ApiError, getToken, request, setToken, whenUnauthorized } from './api.js';
import { clear, h } from './dom.js';
import { destinationsView } from './views/destinations.js';
import { eventsView } from './views/events.js';
import { profileView } from './views/profile.js';
import { rejectedView } from './views/rejected.js';
import { rulesView } from './views/rules.js';
import { schemasView } from './views/schemas.js';
import { sourcesView } from './views/sources.js';
import type { View } from './views/view.js';

const routes: { path: string; label: string; view: View }[] = [
  { path: 'events', label: 'Live events', view: eventsView },
  { path: 'sources', label: 'Event sources', view: sourcesView },
  { path: 'schemas', label: 'Validation schemas', view: schemasView },
  { path: 'rejected', label: 'Quarantine', view: rejectedView },
  { path: 'rules', label: 'Profile rules', view: rulesView },
  { path: 'destinations', label: 'Destinations', view: destinationsView },
  { path: 'profile', label: 'Profiles', view: profileView },
];

const app = document.getElementById('app')!;
let cleanup: (() => void) | void = undefined;
let flashTimer: ReturnType<typeof setTimeout> | undefined;

/** A message at the top of the page: errors stay until the next one, others fade after a few seconds. */
function flash(message: string, kind: 'ok' | 'error' = 'ok'): void {
  const box = document.getElementById('flash');
  if (!box) return;
  box.textContent = message;
  box.className = `flash ${kind}`;
  box.hidden = false;
  if (flashTimer) clearTimeout(flashTimer);
  if (kind === 'ok') flashTimer = setTimeout(() => (box.hidden = true), 4000);
}

function parseHash(): { path: string; rest: string[] } {
  const [path = 'events', ...rest] = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  return { path: path || 'events', rest };
}

function renderSignIn(message = ''): void {
  cleanup?.();
  cleanup = undefined;
  clear(app);
  const input = h('input', {
    type: 'password',
    id: 'token',
    name: 'token',
    autocomplete: 'current-password',
    placeholder: 'API token',
    required: true,
  });
  const error = h('p', { className: 'error', id: 'signin-error' }, message);
  const form = h(
    'form',
    {
      className: 'signin card',
      id: 'signin',
      onsubmit: async (event) => {
        event.preventDefault();
        const token = input.value.trim();
        error.textContent = '';
        try {
          await request('GET', '/event-sources', undefined, token);
          setToken(token);
          if (!location.hash || location.hash === '#/') location.hash = '#/events';
          render();
        } catch (e) {
          error.textContent =
            e instanceof ApiError && e.status === 401
              ? 'This token is not valid.'
              : `Sign-in failed: ${String(e)}`;
        }
      },
    },
    h('h1', {}, 'Event collector'),
    h(
      'p',
      {},
      'Sign in with the management API token (TRACK_API_TOKEN, or the file api-token in the data folder).',
    ),
    h('label', { for: 'token' }, 'API token'),
    input,
    h('button', { type: 'submit', id: 'signin-submit' }, 'Sign in'),
    error,
  );
  app.append(h('div', { className: 'signin-page' }, form));
  input.focus();
}

function render(): void {
  if (!getToken()) return renderSignIn();
  cleanup?.();
  cleanup = undefined;
  const { path, rest } = parseHash();
  const route = routes.find((r) => r.path === path) ?? routes[0]!;
  clear(app);
  const nav = h(
    'nav',
    {},
    routes.map((r) =>
      h('a', { href: `#/${r.path}`, className: r === route ? 'active' : '', 'data-route': r.path }, r.label),
    ),
  );
  const signOut = h(
    'button',
    {
      type: 'button',
      className: 'link',
      id: 'signout',
      onclick: () => {
        setToken(null);
        renderSignIn();
      },
    },
    'Sign out',
  );
  const main = h('main', { id: 'view', 'data-view': route.path });
  app.append(
    h('header', {}, h('span', { className: 'brand' }, 'Event collector'), nav, signOut),
    h('div', { id: 'flash', className: 'flash', hidden: true }),
    main,
  );
  cleanup = route.view(main, { params: rest, flash });
}

whenUnauthorized(() => {
  setToken(null);
  renderSignIn('The service refused the token: sign in again.');
});
addEventListener('hashchange', render);
render();
