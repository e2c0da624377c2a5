// The demo page's buttons: each sends the event named by its data attributes through the tracker;
// the list shows what the service answered to each request (the tracker's `tracker:sent` events).
interface DemoTracker {
  track(type: string, properties?: Record<string, unknown>): void;
}

const log = document.getElementById('log');

function showIds(): void {
  const profile = document.getElementById('profile');
  const session = document.getElementById('session');
  if (profile) profile.textContent = localStorage.getItem('ec_pid') ?? '(none yet)';
  const match = /(?:^|;\s*)ec_sid=([^;]+)/.exec(document.cookie);
  if (session) session.textContent = match ? decodeURIComponent(match[1]!) : '(none yet)';
}

for (const button of Array.from(document.querySelectorAll<HTMLButtonElement>('button[data-type]'))) {
  button.addEventListener('click', () => {
    const type = button.dataset.type ?? 'demo-click';
    const properties = JSON.parse(button.dataset.properties ?? '{}') as Record<string, unknown>;
    const tracker = (window as Window & { tracker?: DemoTracker }).tracker;
    if (!tracker) return;
    tracker.track(type, properties);
  });
}

interface Sent {
  status: number;
  types: string[];
  detail?: unknown;
}

/** One line per request, once answered: stored, refused (with the service's reason) or not sent. */
addEventListener('tracker:sent', (event) => {
  const { status, types, detail } = (event as CustomEvent<Sent>).detail;
  const outcome =
    status >= 200 && status < 300
      ? 'sent'
      : status === 0
        ? 'not sent: the service cannot be reached'
        : `refused (${status}${typeof detail === 'string' ? `: ${detail}` : ''})`;
  const item = document.createElement('li');
  item.className = status >= 200 && status < 300 ? 'ok' : 'refused';
  item.textContent = `${new Date().toLocaleTimeString()} ${types.join(', ')}: ${outcome}`;
  log?.prepend(item);
});

setInterval(showIds, 1000);
showIds();
