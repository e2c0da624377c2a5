import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from 'chart.js';
import type { EventStats } from '../api.js';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);

const PALETTE = [
  '#3d63f0',
  '#f08c3d',
  '#2aa876',
  '#d64545',
  '#8e5bd6',
  '#c9a227',
  '#2b9fb5',
  '#e05fa5',
  '#6b7a90',
];
const MINUTE = 60_000;

export interface Buckets {
  labels: string[];
  series: { type: string; counts: number[] }[];
  from: number;
  to: number;
}

/**
 * The counts of GET /events/stats as bars: every minute of the window (those without events at 0),
 * the types most frequent first, and the other types as one series.
 */
export function bucketsOf(stats: EventStats): Buckets {
  const first = Math.floor(Date.parse(stats.since) / MINUTE);
  const last = Math.ceil(Date.parse(stats.until) / MINUTE) - 1;
  const size = Math.max(last - first + 1, 0);
  const zeros = () => new Array<number>(size).fill(0);
  const series = stats.types.map(({ type }) => ({ type, counts: zeros() }));
  const other = { type: `other types (${stats.other.types})`, counts: zeros() };
  for (const minute of stats.minutes) {
    const at = Math.floor(Date.parse(minute.minute) / MINUTE) - first;
    if (!(at >= 0 && at < size)) continue;
    minute.counts.forEach((count, i) => {
      if (series[i]) series[i].counts[at] = count;
    });
    other.counts[at] = minute.other;
  }
  if (stats.other.total > 0) series.push(other);
  const labels = Array.from({ length: size }, (_, i) =>
    new Date((first + i) * MINUTE).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }),
  );
  return { labels, series, from: first * MINUTE, to: (last + 1) * MINUTE };
}

/** A stacked bar chart of events per type and minute, updated in place. */
export class EventsChart {
  private readonly chart: Chart<'bar', number[], string>;

  constructor(canvas: HTMLCanvasElement) {
    this.chart = new Chart(canvas, {
      type: 'bar',
      data: { labels: [], datasets: [] },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        interaction: { mode: 'index', intersect: false },
        scales: {
          x: { stacked: true, grid: { display: false } },
          y: {
            stacked: true,
            beginAtZero: true,
            ticks: { precision: 0 },
            title: { display: true, text: 'events / minute' },
          },
        },
        plugins: { legend: { position: 'bottom' } },
      },
    });
  }

  update(buckets: Buckets): void {
    this.chart.data.labels = buckets.labels;
    this.chart.data.datasets = buckets.series.map((s, i) => ({
      label: s.type,
      data: s.counts,
      backgroundColor: PALETTE[i % PALETTE.length],
      borderRadius: 2,
    }));
    this.chart.update();
  }

  destroy(): void {
    this.chart.destroy();
  }
}
