/**
 * What crosses from the service's thread to the writer thread (writer.ts): write sets already turned
 * into column values and JSON text, so that the writer does SQLite work only and the message is a
 * few strings per record to copy.
 * One file because its row shapes and the functions that build them must change together.
 */
import type { CommitConflict, EventRecord, MergeOutcome, WriteSet } from '../../model/records.js';
import { shareContext } from '../contexts.js';
import { offBand } from '../event-band.js';
import type { ErrorShape } from './errors.js';
import { encodeChange, type ChangeText } from './change-text.js';

// Tuples rather than objects: a message carries no property names, which makes it cheaper to copy.

/** expectVersion null: insert only if absent; a number: update only at this version. */
export type SessionRow = [id: string, profileId: string | null, doc: string, expectVersion: number | null];

/**
 * `arg` is the new profile's document (create), the visit's time (visit) or null (keep); `change`
 * the ProfileChange as its texts (change-text.ts), or null. The writer applies the change to
 * the stored document: parsing and writing it there costs the service's thread nothing, where
 * sending documents worked out here would cost it their bytes.
 */
export type ProfileRow = [
  op: 'create' | 'visit' | 'keep',
  id: string,
  arg: string | null,
  change: ChangeText | null,
];

/**
 * A run of events (see migrations.ts): the JSON arrays of its ids, distinct types, records and client
 * ids (null when none has one), 1 when an event of it is off band (src/storage/event-band.ts), and
 * the request context its records are merged with when read, kept once (src/storage/contexts.ts),
 * or null when each record holds its whole context.
 */
export type RunRow = [
  insertTime: string,
  sourceId: string,
  sessionId: string | null,
  profileId: string | null,
  ids: string,
  types: string,
  docs: string,
  clientIds: string | null,
  oob: 0 | 1,
  context: string | null,
];

/** A session used by the request without being rewritten, and the time of that request. */
export type TouchRow = [id: string, at: string];

/** One event of a write set whose events carry client ids: the writer keeps it or not, then makes runs. */
export type EventRow = [
  insertTime: string,
  sourceId: string,
  sessionId: string | null,
  profileId: string | null,
  id: string,
  type: string,
  doc: string,
  clientId: string | null,
  oob: 0 | 1,
];

/**
 * A write set for the writer: its events as runs, or, when some carry client ids, as single events
 * (`keyed`), which the writer groups into runs once it has dropped the duplicates; `context` is then
 * the context of those runs (RunRow). `answer`: the caller wants the profile's document back;
 * `replayOf`: the quarantined record it replays (src/model/records.ts: WriteSet).
 */
export type WriteRow = [
  session: SessionRow | null,
  profile: ProfileRow | null,
  runs: RunRow[],
  touch: TouchRow | null,
  keyed: EventRow[] | null,
  answer: boolean,
  replayOf: string | null,
  context: string | null,
];

/**
 * A write set's outcome: `profile` is the profile it left as JSON text, when `answer` asked for it
 * or a merge happened; `changed` whether the stored profile was created or altered; `merges` and
 * `notes` only when there are any.
 */
export type RowOutcome =
  | {
      ok: true;
      profile: string | null;
      changed: boolean;
      merges?: MergeOutcome[];
      notes?: string[];
      duplicates: string[];
    }
  | { ok: false; conflict: CommitConflict }
  | { ok: false; error: ErrorShape };

export function toRow(ws: WriteSet): WriteRow {
  let session: SessionRow | null = null;
  if (ws.session) {
    const { record, expectVersion } = ws.session;
    session = [record.id, record.profile?.id ?? null, JSON.stringify(record), expectVersion];
  }
  let profile: ProfileRow | null = null;
  const p = ws.profile;
  if (p) {
    const change = p.change && p.change.steps.length > 0 ? encodeChange(p.change) : null;
    if (p.op === 'create') profile = ['create', p.record.id, JSON.stringify(p.record), change];
    else profile = [p.op, p.id, p.op === 'visit' ? p.at : null, change];
  }
  const touch: TouchRow | null = ws.touch ? [ws.touch.id, ws.touch.at] : null;
  const keyed = ws.events.some((e) => typeof e.metadata.client_id === 'string');
  const shared = shareContext(ws);
  const records = shared?.events ?? ws.events;
  const context = shared?.text ?? null;
  const events = keyed ? records.map(eventRow) : null;
  const runs = keyed ? [] : runsOf(records, context);
  return [session, profile, runs, touch, events, ws.answerProfile === true, ws.replayOf ?? null, context];
}

function eventRow(e: EventRecord): EventRow {
  return [
    e.metadata.time.insert,
    e.source.id,
    e.session?.id ?? null,
    e.profile?.id ?? null,
    e.id,
    e.type,
    JSON.stringify(e),
    e.metadata.client_id ?? null,
    offBand(e) ? 1 : 0,
  ];
}

/** The events in runs: consecutive events with the same insert time, source, session and profile. */
function runsOf(events: EventRecord[], context: string | null): RunRow[] {
  const runs: RunRow[] = [];
  for (let start = 0, end = 1; start < events.length; start = end, end = start + 1) {
    const a = events[start]!;
    while (end < events.length && sameRun(a, events[end]!)) end++;
    const run = start === 0 && end === events.length ? events : events.slice(start, end);
    const ids: string[] = [];
    const types = new Set<string>();
    let oob: 0 | 1 = 0;
    for (const e of run) {
      ids.push(e.id);
      types.add(e.type);
      if (oob === 0 && offBand(e)) oob = 1;
    }
    runs.push([
      a.metadata.time.insert,
      a.source.id,
      a.session?.id ?? null,
      a.profile?.id ?? null,
      JSON.stringify(ids),
      JSON.stringify([...types]),
      JSON.stringify(run),
      null,
      oob,
      context,
    ]);
  }
  return runs;
}

function sameRun(a: EventRecord, b: EventRecord): boolean {
  return (
    b.metadata.time.insert === a.metadata.time.insert &&
    b.source.id === a.source.id &&
    b.session?.id === a.session?.id &&
    b.profile?.id === a.profile?.id
  );
}

/** Runs of the kept events of a keyed write set (writer thread), grouped like runsOf groups records. */
export function runsOfRows(rows: EventRow[], context: string | null): RunRow[] {
  const runs: RunRow[] = [];
  for (let start = 0, end = 1; start < rows.length; start = end, end = start + 1) {
    const a = rows[start]!;
    while (end < rows.length && sameRowRun(a, rows[end]!)) end++;
    const ids: string[] = [];
    const types = new Set<string>();
    const docs: string[] = [];
    const clientIds: string[] = [];
    let oob: 0 | 1 = 0;
    for (let i = start; i < end; i++) {
      const [, , , , id, type, doc, clientId, eventOob] = rows[i]!;
      ids.push(id);
      types.add(type);
      docs.push(doc);
      if (clientId !== null) clientIds.push(clientId);
      if (eventOob === 1) oob = 1;
    }
    runs.push([
      a[0],
      a[1],
      a[2],
      a[3],
      JSON.stringify(ids),
      JSON.stringify([...types]),
      `[${docs.join(',')}]`,
      clientIds.length > 0 ? JSON.stringify(clientIds) : null,
      oob,
      context,
    ]);
  }
  return runs;
}

function sameRowRun(a: EventRow, b: EventRow): boolean {
  return b[0] === a[0] && b[1] === a[1] && b[2] === a[2] && b[3] === a[3];
}
