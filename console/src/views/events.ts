import { api, query, type EventPage, type EventRecord, type EventStats } from '../api.js';
import { clear, compactJson, formatTime, h, shortId } from '../dom.js';
import { bucketsOf, EventsChart } from './chart.js';
import { errorText, poll, type View } from './view.js';

const LIVE_MS = 2000;
const CHART_MS = 10_000;

const FILTERS = [
  ['type', 'Event type'],
  ['source_id', 'Source id'],
  ['profile_id', 'Profile id'],
  ['session_id', 'Session id'],
] as const;

const TIME_SOURCES: Record<string, string> = {
  server: 'no device time: when the service received it',
  device: 'the device time as sent',
  corrected: "the device time, corrected for the device clock's offset",
  clamped: 'the device time lay in the future: when the service received it',
};

/** When the event happened (`metadata.time.create`) and where that time comes from. */
function happened(event: EventRecord): HTMLTableCellElement {
  const { create, source = 'server' } = event.metadata.time;
  const time = create ?? event.metadata.time.insert;
  return h(
    'td',
    { className: 'happened', title: `${time} · ${TIME_SOURCES[source] ?? source}`, 'data-source': source },
    formatTime(time, time.slice(0, 10) !== event.metadata.time.insert.slice(0, 10)),
    ' ',
    h('span', { className: `time-source ${source}` }, source),
  );
}

/**
 * The live view: the newest events as they arrive (a page of 50, polled every 2 s), and a chart of
 * events per type and minute over the last 30 minutes, counted by the service (GET /events/stats,
 * polled every 10 s): the chart never reads the events themselves.
 */
export const eventsView: View = (root) => {
  const inputs = Object.fromEntries(
    FILTERS.map(([name, label]) => [
      name,
      h('input', { name, id: `filter-${name}`, placeholder: label, 'aria-label': label, spellcheck: false }),
    ]),
  ) as Record<(typeof FILTERS)[number][0], HTMLInputElement>;
  const pause = h('input', { type: 'checkbox', id: 'live-pause' });
  const status = h('span', { className: 'muted', id: 'live-status' }, 'Loading…');
  const chartStatus = h('span', { className: 'muted', id: 'chart-status' });
  const rows = h('tbody');
  const canvas = h('canvas', { id: 'events-chart', 'aria-label': 'Events per type and minute' });
  const seen = new Set<string>();
  let first = true;

  const filters = () => Object.fromEntries(FILTERS.map(([name]) => [name, inputs[name].value.trim()]));

  const form = h(
    'form',
    {
      className: 'filters',
      id: 'live-filters',
      onsubmit: (event) => {
        event.preventDefault();
        restart();
      },
    },
    Object.values(inputs),
    h('button', { type: 'submit' }, 'Apply'),
    h('label', { className: 'inline' }, pause, ' Pause'),
  );

  mount(root);
  function mount(into: HTMLElement) {
    into.append(
      h(
        'section',
        { className: 'card' },
        h('div', { className: 'card-head' }, h('h2', {}, 'Events per type and minute'), chartStatus),
        h('div', { className: 'chart-box' }, canvas),
      ),
      h(
        'section',
        { className: 'card' },
        h('div', { className: 'card-head' }, h('h2', {}, 'Live events'), status),
        form,
        h(
          'table',
          { id: 'live-events', className: 'grid' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ['Received', 'Happened', 'Type', 'Source', 'Profile', 'Session', 'Properties'].map((t) =>
                h('th', {}, t),
              ),
            ),
          ),
          rows,
        ),
      ),
    );
  }

  const chart = new EventsChart(canvas);

  function row(event: EventRecord, fresh: boolean): HTMLTableRowElement {
    const profile = event.profile?.id;
    return h(
      'tr',
      { className: fresh ? 'fresh' : '', 'data-id': event.id, 'data-type': event.type },
      h('td', { title: event.metadata.time.insert }, formatTime(event.metadata.time.insert)),
      happened(event),
      h('td', { className: 'type' }, h('span', { className: 'tag' }, event.type)),
      h('td', {}, event.source.id),
      h(
        'td',
        { className: 'mono profile' },
        profile
          ? h('a', { href: `#/profile/${encodeURIComponent(profile)}`, title: profile }, shortId(profile))
          : '—',
      ),
      h('td', { className: 'mono', title: event.session?.id ?? '' }, shortId(event.session?.id) || '—'),
      h('td', { className: 'mono props' }, compactJson(event.properties)),
    );
  }

  async function refreshLive(): Promise<void> {
    if (pause.checked) return;
    try {
      const page = await api.get<EventPage>(`/events${query({ ...filters(), limit: 50 })}`);
      clear(rows);
      for (const event of page.result) {
        rows.append(row(event, !first && !seen.has(event.id)));
        seen.add(event.id);
      }
      if (page.result.length === 0) {
        rows.append(h('tr', {}, h('td', { colSpan: 7, className: 'muted' }, 'No events yet.')));
      }
      first = false;
      status.textContent = `${page.result.length} newest · updated ${new Date().toLocaleTimeString()}`;
    } catch (error) {
      status.textContent = `Could not load events: ${errorText(error)}`;
    }
  }

  async function refreshChart(): Promise<void> {
    // The counts can be filtered by type and source; the other filters apply to the list only.
    const { type, source_id, profile_id, session_id } = filters();
    const partly = profile_id || session_id ? ' (filtered by type and source only)' : '';
    try {
      const stats = await api.get<EventStats>(`/events/stats${query({ type, source_id })}`);
      const buckets = bucketsOf(stats);
      chart.update(buckets);
      const span = `${formatTime(new Date(buckets.from).toISOString())}–${formatTime(new Date(buckets.to).toISOString())}`;
      chartStatus.textContent =
        stats.total === 0
          ? 'No events in the last 30 minutes.'
          : `${stats.total} events in the last 30 minutes, ${span}${partly}`;
    } catch (error) {
      chartStatus.textContent = `Could not load the counts: ${errorText(error)}`;
    }
  }

  let stops: (() => void)[] = [];
  function restart() {
    stops.forEach((stop) => stop());
    seen.clear();
    first = true;
    stops = [poll(refreshLive, LIVE_MS), poll(refreshChart, CHART_MS)];
  }
  restart();

  return () => {
    stops.forEach((stop) => stop());
    chart.destroy();
  };
};
