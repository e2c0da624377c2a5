/**
 * Reads a V8 .cpuprofile (written by `node --cpu-prof`) and sums self time per function and per
 * component, optionally only inside given time windows (microseconds of the monotonic clock, the
 * clock of `process.hrtime`, which V8 also uses for profile timestamps). `serviceProfiles` does so
 * for the service's threads over each scenario's service legs (`npm run bench -- --cpu-prof`).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface Window {
  start: number;
  end: number;
}

export interface CostLine {
  name: string;
  where: string;
  selfMs: number;
  /** Share of the busy time (everything but `(idle)`). */
  percent: number;
}

export interface ProfileSummary {
  file: string;
  /** Milliseconds covered by the counted samples. */
  totalMs: number;
  idleMs: number;
  busyMs: number;
  /** True when the windows matched no sample and the whole profile was used. */
  wholeProfile: boolean;
  functions: CostLine[];
  components: CostLine[];
}

/** A short location: `src/…` for the service, `<package>/…` for dependencies, `node:…` for Node. */
export function shortLocation(url: string, line: number): string {
  if (url === '') return '';
  let path = url.replace(/^file:\/\//, '');
  const nm = path.lastIndexOf('/node_modules/');
  if (nm >= 0) path = path.slice(nm + '/node_modules/'.length);
  else {
    const dist = path.indexOf('/dist/');
    if (dist >= 0) path = `src/${path.slice(dist + '/dist/'.length).replace(/\.js$/, '.ts')} (dist)`;
  }
  return line >= 0 ? `${path}:${line + 1}` : path;
}

/** The component a function belongs to: the npm package, the service module, Node, or V8. */
export function component(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (url === '') {
    if (functionName.startsWith('(')) return functionName;
    return 'V8 builtins / native';
  }
  if (url.startsWith('node:')) return 'node internals';
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + '/node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return `service: ${url.slice(dist + '/dist/'.length).replace(/\.js$/, '')}`;
  return url;
}

function top(map: Map<string, { name: string; where: string; us: number }>, busyUs: number, count: number) {
  return [...map.values()]
    .sort((a, b) => b.us - a.us)
    .slice(0, count)
    .map((c) => ({
      name: c.name,
      where: c.where,
      selfMs: Math.round(c.us / 100) / 10,
      percent: busyUs > 0 ? Math.round((c.us / busyUs) * 1000) / 10 : 0,
    }));
}

export function summarizeProfile(file: string, windows: Window[] = [], count = 25): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const times: number[] = [];
  let t = profile.startTime;
  for (const delta of profile.timeDeltas) {
    t += delta;
    times.push(t);
  }
  const inWindows = (time: number) => windows.some((w) => time >= w.start && time <= w.end);
  const wholeProfile = windows.length === 0 || !times.some(inWindows);

  const functions = new Map<string, { name: string; where: string; us: number }>();
  const components = new Map<string, { name: string; where: string; us: number }>();
  let totalUs = 0;
  let idleUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const time = times[i]!;
    if (!wholeProfile && !inWindows(time)) continue;
    // A sample stands for the time until the next one.
    const us = (times[i + 1] ?? profile.endTime) - time;
    if (us <= 0) continue;
    const node = byId.get(profile.samples[i]!);
    if (!node) continue;
    const frame = node.callFrame;
    totalUs += us;
    if (frame.functionName === '(idle)') {
      idleUs += us;
      continue;
    }
    const where = shortLocation(frame.url, frame.lineNumber);
    const name = frame.functionName || '(anonymous)';
    const key = `${name} ${where}`;
    const f = functions.get(key) ?? { name, where, us: 0 };
    f.us += us;
    functions.set(key, f);
    const comp = component(frame);
    const c = components.get(comp) ?? { name: comp, where: '', us: 0 };
    c.us += us;
    components.set(comp, c);
  }
  if (totalUs === 0 && !wholeProfile) return summarizeProfile(file, [], count);
  const busyUs = totalUs - idleUs;
  return {
    file,
    totalMs: Math.round(totalUs / 1000),
    idleMs: Math.round(idleUs / 1000),
    busyMs: Math.round(busyUs / 1000),
    wholeProfile,
    functions: top(functions, busyUs, count),
    components: top(components, busyUs, count),
  };
}

function printProfile(title: string, p: ProfileSummary) {
  console.log(
    `\nwhere the time goes: ${title} (${p.busyMs} ms busy, ${p.idleMs} ms idle${p.wholeProfile ? ', whole profile' : ''})`,
  );
  console.log('  top self time by function:');
  for (const f of p.functions.slice(0, 20))
    console.log(`  ${f.percent.toFixed(1).padStart(5)}%  ${f.name}  ${f.where}`);
  console.log('  by component:');
  for (const c of p.components.slice(0, 12)) console.log(`  ${c.percent.toFixed(1).padStart(5)}%  ${c.name}`);
}

/**
 * The service's per-thread profiles: thread 0 is the service thread (HTTP and tracking); of the
 * others, the busiest is the store's writer thread (the checkpointer's is left out). Node names
 * them CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile.
 */
function profileThreads(dir: string): { label: string; file: string }[] {
  if (!existsSync(dir)) return [];
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => ({ file: join(dir, f), thread: Number(f.split('.').at(-3)) }));
  const main = files.find((f) => f.thread === 0);
  const others = files
    .filter((f) => f.thread !== 0)
    .map((f) => ({ ...f, busy: summarizeProfile(f.file, []).busyMs }))
    .sort((a, b) => b.busy - a.busy);
  return [
    ...(main ? [{ label: 'service', file: main.file }] : []),
    ...(others[0] ? [{ label: 'writer', file: others[0].file }] : []),
  ];
}

export type ServiceProfiles = Record<string, { file: string; scenarios: Record<string, ProfileSummary> }>;

/**
 * Sums and prints the service's profiles in `dir` (under bench/results/) over each scenario's
 * windows, per thread; undefined if none was written.
 */
export function serviceProfiles(dir: string, windows: Record<string, Window[]>): ServiceProfiles | undefined {
  const threads = profileThreads(dir);
  if (threads.length === 0) {
    console.log(`\nno CPU profile was written (${dir})`);
    return undefined;
  }
  const profiles: ServiceProfiles = {};
  for (const { label, file } of threads) {
    const relative = `bench/results/${basename(dir)}/${basename(file)}`;
    const entry: ServiceProfiles[string] = { file: relative, scenarios: {} };
    for (const [name, w] of Object.entries(windows)) {
      const p = summarizeProfile(file, w);
      p.file = relative;
      entry.scenarios[name] = p;
      printProfile(`${name}, ${label} thread, service legs only`, p);
    }
    profiles[label] = entry;
    console.log(
      `\nprofile of the ${label} thread: ${relative} (Chrome DevTools › Performance, or speedscope)`,
    );
  }
  return profiles;
}
