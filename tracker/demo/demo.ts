// The demo page's buttons: each sends the event named by its data attributes through the tracker.
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
    const item = document.createElement('li');
    item.textContent = `${new Date().toLocaleTimeString()} ${type} ${JSON.stringify(properties)}`;
    log?.prepend(item);
  });
}

setInterval(showIds, 1000);
showIds();
