/**
 * What crosses from the service's thread to the writer thread (writer.ts): write sets already turned
 * into column values and JSON text, so that the writer does SQLite work only and the message is a
 * few strings per record to copy.
 */
import type { EventRecord, WriteSet } from '../../model/records.js';
import type { ErrorShape } from './errors.js';

// Tuples rather than objects: a message carries no property names, which makes it cheaper to copy.

/** expectVersion null: insert only if absent; a number: update only at this version. */
export type SessionRow = [id: string, profileId: string | null, doc: string, expectVersion: number | null];

export type ProfileRow = [op: 'create', id: string, doc: string] | [op: 'visit', id: string, at: string];

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

export type WriteRow = [
  session: SessionRow | null,
  profile: ProfileRow | null,
  runs: RunRow[],
  touch: TouchRow | null,
];

/** A write set's outcome: `visited` is the profile a visit left, as JSON text. */
export type RowOutcome =
  | { ok: true; visited: string | null }
  | { ok: false; conflict: 'session' | 'profile' }
  | { ok: false; error: ErrorShape };

export function toRow(ws: WriteSet): WriteRow {
  let session: SessionRow | null = null;
  if (ws.session) {
    const { record, expectVersion } = ws.session;
    session = [record.id, record.profile?.id ?? null, JSON.stringify(record), expectVersion];
  }
  let profile: ProfileRow | null = null;
  if (ws.profile?.op === 'create') {
    profile = ['create', ws.profile.record.id, JSON.stringify(ws.profile.record)];
  } else if (ws.profile) {
    profile = ['visit', ws.profile.id, ws.profile.at];
  }
  const touch: TouchRow | null = ws.touch ? [ws.touch.id, ws.touch.at] : null;
  return [session, profile, runsOf(ws.events), touch];
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
