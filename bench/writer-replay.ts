/**
 * The embedded store's writer thread alone, measured closely enough to compare two versions of it.
 * First it records what the writer is asked while the service runs in this process (no sockets):
 * 2,000 first visits, then `--requests` returning visits of the `returning-visitor` scenario, sent
 * 24 at a time, once without rules and once with the ten rules of `npm run bench -- --rules`. Then it
 * replays each recording `--reps` times, alternately, each time in a new process and on a fresh
 * file, through the writer's own code (`prepareWrites`, the checkpointer thread), and prints the
 * CPU time of the replaying thread per returning request, the median of the replays. The service's
 * thread, HTTP and the messages between threads are left out, and no load generator shares the
 * measured thread. It backs bench/README.md.
 *
 *   npx tsx bench/writer-replay.ts [--requests 40000] [--reps 5] [--cpu-prof] [--recordings <folder>]
 *
 * With `--recordings`, two versions of the code replay the same recordings: the same input, though
 * replays of one recording still differ by a microsecond or two. A replay takes about two seconds,
 * less than a held profile waits (held-profiles.ts: MAX_HOLD_MS), so it writes almost no held
 * profile to its row, which the service does every few seconds.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { buildApp } from '../src/app.js';
import { defaultConfig } from '../src/config.js';
import { Checkpointer } from '../src/storage/sqlite/checkpointer.js';
import { configureWriter, lockDataDir, migrate, WAL_LIMIT_BYTES } from '../src/storage/sqlite/connection.js';
import { WriterThread } from '../src/storage/sqlite/writer-thread.js';
import { prepareWrites } from '../src/storage/sqlite/writes.js';
import { ownThreadCpuUs } from './cpu.js';
import { numberOption } from './options.js';
import { CHROME_USER_AGENT, oneEvent, returningVisit, type Visitor } from './payloads.js';
import { median } from './numbers.js';
import { summarizeProfile } from './profile.js';
import { RESULTS } from './processes.js';
import { RULES } from './rules.js';

const { values: flags } = parseArgs({
  options: {
    requests: { type: 'string', default: '40000' },
    reps: { type: 'string', default: '5' },
    'cpu-prof': { type: 'boolean', default: false },
    /** A folder for the recordings: used if they are there, else made there and kept. */
    recordings: { type: 'string' },
    /** Internal: replay the recording in this file (a process of its own per replay). */
    replay: { type: 'string' },
  },
});
const REQUESTS = numberOption('--requests', flags.requests, 1000);
const REPS = numberOption('--reps', flags.reps, 1);
const VISITORS = 2_000;
/** Requests sent at once: about the batches 64 connections give the writer. */
const WAVE = 24;

type Message = [op: string, args: unknown[]];

interface Recording {
  name: string;
  messages: Message[];
  /** The index of the first commit of a returning visit. */
  from: number;
  requests: number;
}

/** What the writer thread is asked while the service takes the workload, rules or not. */
async function record(name: string, rules: boolean): Promise<Recording> {
  const dataDir = mkdtempSync(join(tmpdir(), 'writer-replay-'));
  const release = lockDataDir(dataDir);
  const config = { ...defaultConfig({ dataDir, logLevel: 'silent' }), apiToken: 'replay' };
  const app = await buildApp({ config, logger: false });
  const messages: Message[] = [];
  const writer = WriterThread.prototype as unknown as { call(op: string, ...args: unknown[]): unknown };
  const call = writer.call;
  writer.call = function (this: WriterThread, op, ...args) {
    messages.push([op, structuredClone(args)]);
    return call.call(this, op, ...args);
  };
  const create = async (url: string, body: unknown) => {
    const headers = { authorization: 'Bearer replay', 'content-type': 'application/json' };
    const res = await app.inject({ method: 'POST', url, headers, payload: JSON.stringify(body) });
    if (res.statusCode !== 200) throw new Error(`POST ${url}: ${res.statusCode} ${res.body}`);
  };
  const track = async (payload: string) => {
    const headers = { 'user-agent': CHROME_USER_AGENT };
    const res = await app.inject({ method: 'POST', url: '/track', headers, payload });
    if (res.statusCode !== 200) throw new Error(`POST /track: ${res.statusCode} ${res.body}`);
    return res.json() as { session: { id: string }; profile: { id: string } };
  };
  try {
    await create('/event-source', { id: 'replay', name: 'replay' });
    const first = oneEvent('replay');
    const visitors: Visitor[] = [];
    while (visitors.length < VISITORS) {
      for (const answer of await Promise.all(Array.from({ length: WAVE }, () => track(first())))) {
        visitors.push({ sessionId: answer.session.id, profileId: answer.profile.id });
      }
    }
    if (rules) for (const rule of RULES) await create('/profile-rule', rule);
    const from = messages.length;
    const next = returningVisit('replay', visitors);
    for (let sent = 0; sent < REQUESTS; sent += WAVE) {
      await Promise.all(Array.from({ length: WAVE }, () => track(next())));
    }
    const commits = messages.slice(from).filter(([op]) => op === 'commit');
    const requests = commits.reduce((n, [, args]) => n + (args[0] as unknown[]).length, 0);
    return { name, messages, from, requests };
  } finally {
    writer.call = call;
    await app.close();
    release();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Replays a recording on this thread; CPU µs of this thread per returning request. */
async function replay(recording: Recording, profile: Session | null): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'writer-replay-'));
  const file = join(dir, 'collector.db');
  const db = new Database(file);
  configureWriter(db, 'normal');
  migrate(db);
  const ops = prepareWrites(db, true) as unknown as Record<string, (...args: unknown[]) => unknown>;
  // As the writer thread does (writer.ts): the checkpointer copies the log beside it.
  const checkpointer = new Checkpointer(file, WAL_LIMIT_BYTES, {
    onStopped: () => db.pragma('wal_autocheckpoint = 1000'),
  });
  const post = (method: string) =>
    new Promise<unknown>((ok, fail) => profile!.post(method, (e, r) => (e ? fail(e) : ok(r))));
  // A fresh copy, made before: a replay must not see what an earlier one changed in place.
  const messages = structuredClone(recording.messages);
  let start = 0;
  try {
    for (let i = 0; i < messages.length; i++) {
      if (i === recording.from) {
        if (profile) await post('Profiler.start');
        start = ownThreadCpuUs();
      }
      const [op, args] = messages[i]!;
      ops[op]!(...args);
      if (op !== 'commit') continue;
      const mode = checkpointer.due();
      if (mode) db.pragma(`wal_checkpoint(${mode})`);
    }
    const used = ownThreadCpuUs() - start;
    if (profile) {
      const { profile: data } = (await post('Profiler.stop')) as { profile: unknown };
      const out = join(RESULTS, `writer-replay-${recording.name}.cpuprofile`);
      writeFileSync(out, JSON.stringify(data));
      const summary = summarizeProfile(out, [], 15);
      console.log(`  ${recording.name}: top self time (${out})`);
      for (const f of summary.functions)
        console.log(`    ${f.percent.toFixed(1).padStart(5)}%  ${f.name}  ${f.where}`);
    }
    return used / recording.requests;
  } finally {
    await checkpointer.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Replays the recording in `file` in a process of its own, whose heap no earlier replay left. */
function replayIn(file: string, profile: boolean): number {
  const args = ['--import', 'tsx', fileURLToPath(import.meta.url), '--replay', file];
  if (profile) args.push('--cpu-prof');
  const out = execFileSync(process.execPath, args, {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = out.trim().split('\n');
  for (const line of lines.slice(0, -1)) console.log(line);
  return Number(lines.at(-1));
}

if (flags.replay) {
  const recording = JSON.parse(readFileSync(flags.replay, 'utf8')) as Recording;
  const session = flags['cpu-prof'] ? new Session() : null;
  if (session) {
    session.connect();
    await new Promise((ok) => session.post('Profiler.enable', ok));
  }
  // One replay first, not counted: the code is compiled while it runs.
  await replay(recording, null);
  console.log(await replay(recording, session));
  session?.disconnect();
} else {
  const dir = flags.recordings ?? mkdtempSync(join(tmpdir(), 'writer-replay-'));
  mkdirSync(dir, { recursive: true });
  try {
    const files: [string, string][] = [];
    for (const [name, rules] of [
      ['plain', false],
      ['rules', true],
    ] as const) {
      const file = join(dir, `${name}.json`);
      files.push([name, file]);
      if (existsSync(file)) {
        console.log(`${name}: the recording in ${file}`);
        continue;
      }
      const recording = await record(name, rules);
      writeFileSync(file, JSON.stringify(recording));
      console.log(`${name}: ${recording.requests.toLocaleString('en-US')} returning requests recorded`);
    }
    const times = new Map<string, number[]>(files.map(([name]) => [name, []]));
    for (let rep = 0; rep < REPS; rep++) {
      // The order turns every repetition.
      for (const [name, file] of rep % 2 === 0 ? files : [...files].reverse()) {
        const us = replayIn(file, false);
        times.get(name)!.push(us);
        console.log(`  rep ${rep + 1} ${name.padEnd(5)} ${us.toFixed(2)} µs/request`);
      }
    }
    const plain = median(times.get('plain')!);
    const withRules = median(times.get('rules')!);
    console.log(
      `writer CPU per returning request, median of ${REPS}: ${plain.toFixed(2)} µs without rules, ` +
        `${withRules.toFixed(2)} µs with the ten rules (+${(withRules - plain).toFixed(2)})`,
    );
    if (flags['cpu-prof']) for (const [, file] of files) replayIn(file, true);
  } finally {
    if (!flags.recordings) rmSync(dir, { recursive: true, force: true });
  }
}
