import type { EventRecord, IdentityKey, ProfileRecord, WriteSet } from '../../model/records.js';
import { applyOps, splitChange, withoutEvents } from '../../model/profile-ops.js';
import { applyVisit, newProfile } from '../../model/profiles.js';
import { shareContext } from '../contexts.js';
import { offBand } from '../event-band.js';

/**
 * jsonb cannot hold U+0000 or a lone surrogate. JSON.stringify writes both as `\u` escapes (and every
 * other character as itself), so this finds the documents to keep in the `json` column instead; a
 * literal backslash followed by such text matches too, which only costs the jsonb form.
 */
const NOT_FOR_JSONB = /\\u(?:0000|d[89a-f])/i;

/** The `[doc, raw]` column values of a document: exactly one is set. */
export function documentColumns(value: unknown): [string | null, string | null] {
  return textColumns(JSON.stringify(value));
}

/** The `[doc, raw]` column values of a document's JSON text. */
function textColumns(text: string): [string | null, string | null] {
  return NOT_FOR_JSONB.test(text) ? [null, text] : [text, null];
}

/** The statement that writes one write set, the profile it leaves, or the conflict known beforehand. */
export type WritePlan =
  | { conflict: 'profile' }
  | {
      statement: { name: string; text: string; values: unknown[] };
      /** The profile as this write set leaves it (created, visited or changed), when it read one. */
      profile: ProfileRecord | null;
      /** True when the statement creates or alters the stored profile. */
      changed: boolean;
      /** The identities to attach once the statement has written (profiles.ts). */
      identities: IdentityKey[];
      /** True when the statement answers `duplicates`: its events carry client ids. */
      keyed: boolean;
      /**
       * The profile as the write set leaves it when these of its events turn out to be duplicates
       * (their operations not applied); null when their operations changed nothing of it.
       */
      without(duplicates: string[]): ProfileRecord | null;
    };

const EVENT_COLUMNS =
  'id, insert_time, type, source_id, session_id, profile_id, client_id, create_time, off_band, doc, raw';
const EVENT_TYPES = [
  'text',
  'timestamptz',
  'text',
  'text',
  'text',
  'text',
  'text',
  'timestamptz',
  'boolean',
  'jsonb',
  'json',
];

/** By client id (events without one first), each client id's first event first. */
function byClientId(a: EventRecord, b: EventRecord): number {
  const x = a.metadata.client_id ?? '';
  const y = b.metadata.client_id ?? '';
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * Plans one write set as a single statement. The session write (insert if absent, or update at the
 * expected version) comes first and everything else is written only when it wrote a row, so that a
 * session conflict writes nothing; the statement answers `written` false then. A visit and the
 * rules' operations are applied to `current`, the stored profile the caller read under a row lock;
 * without one, the write set is a profile conflict and nothing is sent. A write set that only
 * requires its profile to exist takes a key-share lock on it in the statement (so that a merge or
 * an erasure waits for it, or it sees the profile gone) and writes nothing without it: the
 * statement answers `profile_ok` false then. The profile is planned as if no event were a
 * duplicate; the caller corrects it with `without` in the rare case one is (the unique index of
 * client ids decides in the statement itself).
 */
export function planWriteSet(ws: WriteSet, current: (id: string) => ProfileRecord | null): WritePlan {
  const values: unknown[] = [];
  const param = (value: unknown, type?: string) => {
    values.push(value);
    return type ? `$${values.length}::${type}` : `$${values.length}`;
  };
  const parts: string[] = [];
  const shape: string[] = [];
  let duplicates = '';

  const p = ws.profile;
  const change = p?.change ?? null;
  const { ops, identities } = splitChange(change);
  let profile: ProfileRecord | null = null;
  let changed = false;
  // The profile before the operations, to plan it again without those of duplicate events.
  let base: ProfileRecord | null = null;
  const guarded = p !== undefined && p.op === 'keep' && ops.length === 0 && identities.length === 0;
  if (p && p.op !== 'create' && !guarded) {
    const stored = current(p.id);
    if (!stored) return { conflict: 'profile' };
    base = p.op === 'visit' ? applyVisit(stored, p.at) : stored;
    profile = base;
    changed = p.op === 'visit';
    if (ops.length > 0) {
      const result = applyOps(profile, ops, change!.at);
      profile = result.profile;
      changed ||= result.changed;
    }
  }
  if (guarded) {
    shape.push('k');
    parts.push(`k AS (SELECT FROM profiles WHERE id = ${param(p.id, 'text')} FOR KEY SHARE)`);
  }
  const ifGuard = guarded ? ['EXISTS (SELECT FROM k)'] : [];
  // A replay claims its quarantined record (docs/api.md#replay): the row lock makes a concurrent
  // replay wait for this commit and then find the row gone; without the row nothing is written.
  const replayOf = ws.replayOf === undefined ? null : param(ws.replayOf, 'text');
  if (replayOf !== null) {
    shape.push('r');
    parts.push(`r AS (SELECT FROM rejected WHERE id = ${replayOf} FOR UPDATE)`);
    ifGuard.push('EXISTS (SELECT FROM r)');
  }

  if (ws.session) {
    const { record, expectVersion } = ws.session;
    const [doc, raw] = documentColumns(record);
    const id = param(record.id);
    const profileId = param(record.profile?.id ?? null, 'text');
    const docParam = param(doc, 'jsonb');
    const rawParam = param(raw, 'json');
    if (expectVersion === null) {
      shape.push('si');
      const where = ifGuard.length ? ` WHERE ${ifGuard.join(' AND ')}` : '';
      parts.push(
        `s AS (INSERT INTO sessions (id, profile_id, version, doc, raw) SELECT ${id}, ${profileId}, 1, ${docParam}, ${rawParam}${where} ON CONFLICT (id) DO NOTHING RETURNING 1)`,
      );
    } else {
      shape.push('su');
      const version = param(expectVersion, 'integer');
      const and = ifGuard.map((c) => ` AND ${c}`).join('');
      parts.push(
        `s AS (UPDATE sessions SET profile_id = ${profileId}, doc = ${docParam}, raw = ${rawParam}, version = version + 1 WHERE id = ${id} AND version = ${version}${and} RETURNING 1)`,
      );
    }
  }
  const conditions = [...ifGuard, ...(ws.session ? ['EXISTS (SELECT FROM s)'] : [])];
  // `WHERE true` when nothing else: INSERT … SELECT … ON CONFLICT needs a WHERE to parse.
  const where = ` WHERE ${conditions.length ? conditions.join(' AND ') : 'true'}`;
  const and = conditions.map((c) => ` AND ${c}`).join('');

  if (p?.op === 'create') {
    shape.push('pc');
    profile = p.record;
    changed = true;
    const [doc, raw] = documentColumns(profile);
    parts.push(
      `p AS (INSERT INTO profiles (id, doc, raw) SELECT ${param(profile.id, 'text')}, ${param(doc, 'jsonb')}, ${param(raw, 'json')}${where} RETURNING 1)`,
    );
  } else if (profile && changed) {
    shape.push('pu');
    const [doc, raw] = documentColumns(profile);
    parts.push(
      `p AS (UPDATE profiles SET doc = ${param(doc, 'jsonb')}, raw = ${param(raw, 'json')} WHERE id = ${param(profile.id)}${and} RETURNING 1)`,
    );
  }

  const keyed = ws.events.some((e) => typeof e.metadata.client_id === 'string');
  if (ws.events.length > 0) {
    const shared = shareContext(ws);
    const events = shared?.events ?? ws.events;
    const columns: unknown[][] = EVENT_TYPES.map(() => []);
    // Client ids are inserted in one order everywhere, so that two transactions inserting the same
    // ids wait for each other in the same direction instead of deadlocking.
    for (const e of keyed ? [...events].sort(byClientId) : events) {
      const clientId = e.metadata.client_id ?? null;
      const row = [
        e.id,
        e.metadata.time.insert,
        e.type,
        e.source.id,
        e.session?.id ?? null,
        e.profile?.id ?? null,
        clientId,
        e.metadata.time.create ?? e.metadata.time.insert,
        offBand(e),
        ...documentColumns(e),
      ];
      row.forEach((value, i) => columns[i]!.push(value));
    }
    const arrays = columns.map((column, i) => param(column, `${EVENT_TYPES[i]}[]`));
    // A context kept once is named by every event of the write set (the id of its first event).
    const contextId = shared ? param(events[0]!.id, 'text') : null;
    const insert = contextId
      ? `INSERT INTO events (${EVENT_COLUMNS}, context_id) SELECT u.*, ${contextId} FROM unnest(${arrays.join(', ')}) u${where}`
      : `INSERT INTO events (${EVENT_COLUMNS}) SELECT * FROM unnest(${arrays.join(', ')})${where}`;
    if (keyed) {
      // An event whose client id is stored for its source, or comes earlier in the statement, is not
      // inserted: the unique index decides, waiting for another transaction's insert to commit.
      shape.push('ek');
      parts.push(
        `e AS (${insert} ON CONFLICT (client_id, source_id) WHERE client_id IS NOT NULL DO NOTHING RETURNING id)`,
      );
      duplicates = `, ARRAY(SELECT i FROM unnest(${arrays[0]}) AS sent(i) WHERE NOT EXISTS (SELECT FROM e WHERE e.id = sent.i)) AS duplicates`;
    } else {
      shape.push('e');
      parts.push(`e AS (${insert} RETURNING 1)`);
    }
    if (shared) {
      // Written only when an event was (none is when all prove duplicates, or on a conflict).
      shape.push('c');
      const [doc, raw] = textColumns(shared.text);
      parts.push(
        `c AS (INSERT INTO event_contexts (id, size, doc, raw) SELECT ${contextId}, ${param(shared.text.length, 'integer')}, ${param(doc, 'jsonb')}, ${param(raw, 'json')} WHERE EXISTS (SELECT FROM e))`,
      );
    }
  }

  if (replayOf !== null) parts.push(`d AS (DELETE FROM rejected WHERE id = ${replayOf}${and})`);

  const written = ws.session ? 'EXISTS (SELECT FROM s)' : 'true';
  const profileOk = guarded ? 'EXISTS (SELECT FROM k)' : 'true';
  const replayed = replayOf === null ? '' : ', EXISTS (SELECT FROM r) AS replayed';
  const result = `SELECT ${written} AS written, ${profileOk} AS profile_ok${replayed}${duplicates}`;
  const text = parts.length > 0 ? `WITH ${parts.join(', ')} ${result}` : result;
  const name = `write-${shape.join('-') || 'nothing'}`;

  const without = (dups: string[]): ProfileRecord | null => {
    if (!change || !p || dups.length === 0) return null;
    const kept = splitChange(withoutEvents(change, dups)).ops;
    if (kept.length === ops.length) return null;
    const start = p.op === 'create' ? newProfile(p.record.id, change.at) : base!;
    return applyOps(start, kept, change.at).profile;
  };
  return { statement: { name, text, values }, profile, changed, identities, keyed, without };
}
