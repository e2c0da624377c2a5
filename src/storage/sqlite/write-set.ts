/**
 * What crosses from the service's thread to the writer thread (writer.ts): write sets already turned
 * into column values and JSON text, so that the writer does SQLite work only and the message is a
 * few strings per record to copy.
 */
import type { ProfileOp } from '../../model/profile-ops.js';
import type { EventRecord, MergeOutcome, ProfileChange, WriteSet } from '../../model/records.js';
import type { ErrorShape } from './errors.js';

// Tuples rather than objects: a message carries no property names, which makes it cheaper to copy.

/** expectVersion null: insert only if absent; a number: update only at this version. */
export type SessionRow = [id: string, profileId: string | null, doc: string, expectVersion: number | null];

/**
 * `arg` is the new profile's document (create), the visit's time (visit) or null (keep); `change`
 * the ProfileChange in its compact form (encodeChange), or null. The writer applies the change to
 * the stored document: parsing and writing it there costs the service's thread nothing, where
 * sending documents worked out here would cost it their bytes.
 */
export type ProfileRow = [
  op: 'create' | 'visit' | 'keep',
  id: string,
  arg: string | null,
  change: string | null,
];

/** An operation as a tuple: its name, its path (dotted) or identity type ('' for a segment), its value. */
type OpTuple = [op: ProfileOp['op'], target: string, value?: unknown];

/** A change as compact JSON text, `[at, [[eventId, [op…]]…]]`: half the bytes of the records. */
export function encodeChange(change: ProfileChange): string {
  const steps = change.steps.map((step) => [
    step.event,
    step.ops.map((op): OpTuple => {
      if (op.op === 'identify') return [op.op, op.type, op.value];
      if (!('path' in op)) return [op.op, '', op.value];
      if (op.op === 'unset') return [op.op, op.path.join('.')];
      return [op.op, op.path.join('.'), op.value];
    }),
  ]);
  return JSON.stringify([change.at, steps]);
}

export function decodeChange(text: string): ProfileChange {
  const [at, steps] = JSON.parse(text) as [string, [string, OpTuple[]][]];
  return {
    at,
    steps: steps.map(([event, ops]) => ({
      event,
      ops: ops.map(([op, target, value]) => {
        if (op === 'identify') return { op, type: target, value } as ProfileOp;
        if (op === 'add_segment' || op === 'remove_segment') return { op, value } as ProfileOp;
        return { op, path: target.split('.'), value } as ProfileOp;
      }),
    })),
  };
}

/** A run of events (see migrations.ts) and the JSON arrays of its ids, distinct types and records. */
export type RunRow = [
  insertTime: string,
  sourceId: string,
  sessionId: string | null,
  profileId: string | null,
  ids: string,
  types: string,
  docs: string,
];

/** A session used by the request without being rewritten, and the time of that request. */
export type TouchRow = [id: string, at: string];

/** `answer`: the caller wants the profile's document back (src/model/records.ts: WriteSet). */
export type WriteRow = [
  session: SessionRow | null,
  profile: ProfileRow | null,
  runs: RunRow[],
  touch: TouchRow | null,
  answer: boolean,
];

/**
 * A write set's outcome: `profile` is the profile it left as JSON text, when `answer` asked for it
 * or a merge happened; `changed` whether the stored profile was created or altered; `merges` and
 * `notes` only when there are any.
 */
export type RowOutcome =
  | { ok: true; profile: string | null; changed: boolean; merges?: MergeOutcome[]; notes?: string[] }
  | { ok: false; conflict: 'session' | 'profile' }
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
  return [session, profile, runsOf(ws.events), touch, ws.answerProfile === true];
}

/** The events in runs: consecutive events with the same insert time, source, session and profile. */
function runsOf(events: EventRecord[]): RunRow[] {
  const runs: RunRow[] = [];
  for (let start = 0, end = 1; start < events.length; start = end, end = start + 1) {
    const a = events[start]!;
    while (end < events.length && sameRun(a, events[end]!)) end++;
    const run = start === 0 && end === events.length ? events : events.slice(start, end);
    const ids: string[] = [];
    const types = new Set<string>();
    for (const e of run) {
      ids.push(e.id);
      types.add(e.type);
    }
    runs.push([
      a.metadata.time.insert,
      a.source.id,
      a.session?.id ?? null,
      a.profile?.id ?? null,
      JSON.stringify(ids),
      JSON.stringify([...types]),
      JSON.stringify(run),
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
