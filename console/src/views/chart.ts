import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from 'chart.js';
import type { EventRecord } from '../api.js';

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
/** At most this many minutes are drawn (the newest). */
const MAX_BUCKETS = 60;

export interface Buckets {
  labels: string[];
  series: { type: string; counts: number[] }[];
  from: number;
  to: number;
}

/** Counts events per type and per minute, from the oldest to the newest minute of the sample. */
export function bucketByMinute(events: EventRecord[]): Buckets {
  const times = events.map((e) => Date.parse(e.metadata.time.insert)).filter((t) => Number.isFinite(t));
  if (times.length === 0) return { labels: [], series: [], from: 0, to: 0 };
  const last = Math.floor(Math.max(...times) / MINUTE);
  const first = Math.max(Math.floor(Math.min(...times) / MINUTE), last - MAX_BUCKETS + 1);
  const size = last - first + 1;
  const byType = new Map<string, number[]>();
  for (const event of events) {
    const minute = Math.floor(Date.parse(event.metadata.time.insert) / MINUTE);
    if (!(minute >= first)) continue;
    let counts = byType.get(event.type);
    if (!counts) byType.set(event.type, (counts = new Array<number>(size).fill(0)));
    counts[minute - first]! += 1;
  }
  const labels = Array.from({ length: size }, (_, i) =>
    new Date((first + i) * MINUTE).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }),
  );
  const series = [...byType.entries()]
    .map(([type, counts]) => ({ type, counts }))
    .sort((a, b) => b.counts.reduce((x, y) => x + y, 0) - a.counts.reduce((x, y) => x + y, 0));
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
