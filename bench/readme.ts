/**
 * The benchmark section of the top-level README.md, between `<!-- bench:start -->` and
 * `<!-- bench:end -->`: rewritten from a run's report (the embedded store's), and by nothing else.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as prettier from 'prettier';
import { fmt } from './numbers.js';
import { ROOT } from './processes.js';
import { HEAD, NOTE, tableRows } from './report.js';
import type { Report } from './results.js';

const README = join(ROOT, 'README.md');
const START_MARKER = '<!-- bench:start -->';
const END_MARKER = '<!-- bench:end -->';

function markdown(report: Report): string {
  const lines: string[] = [];
  const m = report.machine;
  lines.push(
    `Last run: \`${report.command}\`, ${report.date.slice(0, 10)}, service at ${report.revision ?? 'unknown commit'}, ` +
      `${m.nproc} × ${m.cpu}, Node ${m.node}` +
      `${report.cpuProfile ? ' (service under --cpu-prof: slower than usual)' : ''}.`,
    '',
    `| ${HEAD.join(' | ')} |`,
    `|${HEAD.map((_, i) => (i < 2 ? '---' : '---:')).join('|')}|`,
  );
  for (const row of tableRows(report.scenarios)) lines.push(`| ${row.join(' | ')} |`);
  lines.push('');
  lines.push(
    `${report.connections} connections, ${report.durationSec} s per leg, ${report.rounds} rounds (service, bare, service, bare, …` +
      `${report.scenarios.some((s) => s.name.endsWith('+rules')) ? '; a scenario and its +rules variant in turn, A B then B A' : ''}); ` +
      'requests/s and events/s are the mean of the legs, p50/p99 the worst leg, peak RSS the highest sample; ' +
      'CPU µs/request is the server process (all its threads) per request, machine busy % the share of all cores in use ' +
      '(the load generator included), both the mean of the legs.',
  );
  const targets = report.scenarios.flatMap((s) =>
    (s.targets ?? []).map((t) => `${s.name} ${t.target}: ${t.pass ? 'PASS' : 'MISS'} (${t.value})`),
  );
  if (report.soak) targets.push(`soak flat RSS: ${report.soak.flat ? 'PASS' : 'MISS'}`);
  if (targets.length) lines.push('', `Targets: ${targets.join('; ')}.`);
  if (report.soak) {
    const s = report.soak;
    lines.push(
      '',
      `Soak: ${s.minutes} min at ${fmt(s.targetRate)} requests/s: RSS ${s.rssStartMb} MB at start, ${s.rssEndMb} MB at the end ` +
        `(max ${s.rssMaxMb} MB, ${s.rssGrowthPercent >= 0 ? '+' : ''}${s.rssGrowthPercent}%), p99 ${s.p99Ms} ms, ` +
        `non-2xx ${s.non2xx}.`,
    );
  }
  const c = report.storedCheck;
  lines.push(
    '',
    `Stored-count check: ${c.ok ? 'OK' : 'FAILED'}: ${fmt(c.acknowledged)} events acknowledged, ${fmt(c.stored)} stored` +
      ` (read back through \`GET /events\`; the surplus is requests in flight when a leg stopped)` +
      `${c.perSource
        .filter((p) => p.error)
        .map((p) => `; ${p.sourceId}: ${p.error}`)
        .join('')}.`,
    '',
    NOTE,
    '',
    'How to run and what each scenario is: [bench/README.md](bench/README.md).',
  );
  return lines.join('\n');
}

/** Formats the section as the repository's Prettier configuration would (aligned tables). */
async function formatMarkdown(text: string): Promise<string> {
  const config = (await prettier.resolveConfig(README)) ?? {};
  return prettier.format(text, { ...config, parser: 'markdown' });
}

/** Replaces the benchmark section of README.md with the report's (appends it if there is none). */
export async function writeReadme(report: Report): Promise<void> {
  const block = `${START_MARKER}\n\n${await formatMarkdown(markdown(report))}${END_MARKER}`;
  const current = existsSync(README) ? readFileSync(README, 'utf8') : '';
  const start = current.indexOf(START_MARKER);
  const end = current.indexOf(END_MARKER);
  let next: string;
  if (start >= 0 && end > start) {
    next = current.slice(0, start) + block + current.slice(end + END_MARKER.length);
  } else {
    const base = current.replace(/\s*$/, '');
    next = `${base}${base ? '\n\n' : ''}## Benchmarks\n\n${block}\n`;
  }
  writeFileSync(README, next);
}
