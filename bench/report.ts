/** What `npm run bench` prints at the end of a run: the table, the targets, the soak, the stored count. */
import { fmt } from './numbers.js';
import type { Report } from './results.js';
import { soakLine } from './soak.js';
import { printStoredCheck } from './stored.js';
import type { ScenarioSummary } from './summary.js';

export const NOTE =
  'The load generator shares the machine with the server under test, so absolute figures depend on the ' +
  'machine and on what else runs on it; the figure to compare is the ratio to the bare Fastify server ' +
  'measured in the same run.';

export const HEAD = [
  'scenario',
  'target',
  'requests/s',
  'events/s',
  'p50 ms',
  'p99 ms',
  'non-2xx',
  'peak RSS MB',
  'CPU µs/request',
  'machine busy %',
  'ratio service/bare',
];

/** The table's rows: per scenario, one for the service and one for the bare server. */
export function tableRows(summaries: ScenarioSummary[]): string[][] {
  const rows: string[][] = [];
  for (const s of summaries) {
    if (!s.service || !s.bare) {
      rows.push([s.name, 'not run', ...HEAD.slice(2).map(() => '')]);
      continue;
    }
    for (const [target, t] of [
      ['service', s.service],
      ['bare', s.bare],
    ] as const) {
      rows.push([
        target === 'service' ? s.name : '',
        target,
        fmt(t.requestsPerSec),
        fmt(t.eventsPerSec),
        fmt(t.p50Ms),
        fmt(t.p99Ms),
        fmt(t.non2xx + t.errors),
        t.rssPeakMb.toFixed(1),
        fmt(t.cpuUsPerRequest) +
          (t.databaseCpuUsPerRequest === undefined ? '' : ` + ${fmt(t.databaseCpuUsPerRequest)} PostgreSQL`),
        fmt(t.machineBusyPercent),
        target === 'service' ? (s.ratio ?? 0).toFixed(2) : '',
      ]);
    }
  }
  return rows;
}

function printTable(summaries: ScenarioSummary[]) {
  const rows = [HEAD, ...tableRows(summaries)];
  const widths = HEAD.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  console.log('');
  for (const row of rows)
    console.log(row.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  '));
}

export function printReport(report: Report): void {
  printTable(report.scenarios);
  console.log(`\n${NOTE}`);
  for (const s of report.scenarios)
    for (const t of s.targets ?? [])
      console.log(`  ${t.pass ? 'PASS' : 'MISS'}  ${s.name}: ${t.target} (${t.value})`);
  if (report.soak) console.log(soakLine(report.soak));
  if (report.service.logLines > 0)
    console.log(
      `\nservice logged ${report.service.logLines} lines at warn or above (bench/results/service.log)`,
    );
  printStoredCheck(report.storedCheck);
}
