import type { EventRecord, ProfileRecord, WriteSet } from '../../model/records.js';
import { applyVisit } from '../../model/profiles.js';
import { offBand } from '../event-band.js';

/**
 * jsonb cannot hold U+0000 or a lone surrogate. JSON.stringify writes both as `\u` escapes (and every
 * other character as itself), so this finds the documents to keep in the `json` column instead; a
 * literal backslash followed by such text matches too, which only costs the jsonb form.
 */
const NOT_FOR_JSONB = /\\u(?:0000|d[89a-f])/i;

/** The `[doc, raw]` column values of a document: exactly one is set. */
export function documentColumns(value: unknown): [string | null, string | null] {
  const text = JSON.stringify(value);
  return NOT_FOR_JSONB.test(text) ? [null, text] : [text, null];
}

/** The statement that writes one write set, the profile it leaves, or the conflict known beforehand. */
export type WritePlan =
  | { conflict: 'profile' }
  | {
      statement: { name: string; text: string; values: unknown[] };
      /** The profile as this write set leaves it (created or visited), when it has one. */
      profile: ProfileRecord | null;
      /** True when the statement answers `duplicates`: its events carry client ids. */
      keyed: boolean;
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
 * session conflict writes nothing; the statement answers `written` false then. A visit is applied
 * to `current`, the stored profile the caller read under a row lock; without one, the write set is
 * a profile conflict and nothing is sent.
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

  if (ws.session) {
    const { record, expectVersion } = ws.session;
    const [doc, raw] = documentColumns(record);
    const id = param(record.id);
    const profileId = param(record.profile?.id ?? null, 'text');
    const docParam = param(doc, 'jsonb');
    const rawParam = param(raw, 'json');
    if (expectVersion === null) {
      shape.push('si');
      parts.push(
        `s AS (INSERT INTO sessions (id, profile_id, version, doc, raw) VALUES (${id}, ${profileId}, 1, ${docParam}, ${rawParam}) ON CONFLICT (id) DO NOTHING RETURNING 1)`,
      );
    } else {
      shape.push('su');
      const version = param(expectVersion, 'integer');
      parts.push(
        `s AS (UPDATE sessions SET profile_id = ${profileId}, doc = ${docParam}, raw = ${rawParam}, version = version + 1 WHERE id = ${id} AND version = ${version} RETURNING 1)`,
      );
    }
  }
  const ifSession = ws.session ? ' WHERE EXISTS (SELECT FROM s)' : ' WHERE true';
  const andIfSession = ws.session ? ' AND EXISTS (SELECT FROM s)' : '';

  let profile: ProfileRecord | null = null;
  if (ws.profile?.op === 'create') {
    shape.push('pc');
    profile = ws.profile.record;
    const [doc, raw] = documentColumns(profile);
    parts.push(
      `p AS (INSERT INTO profiles (id, doc, raw) SELECT ${param(profile.id, 'text')}, ${param(doc, 'jsonb')}, ${param(raw, 'json')}${ifSession} RETURNING 1)`,
    );
  } else if (ws.profile?.op === 'visit') {
    shape.push('pv');
    const stored = current(ws.profile.id);
    if (!stored) return { conflict: 'profile' };
    profile = applyVisit(stored, ws.profile.at);
    const [doc, raw] = documentColumns(profile);
    parts.push(
      `p AS (UPDATE profiles SET doc = ${param(doc, 'jsonb')}, raw = ${param(raw, 'json')} WHERE id = ${param(profile.id)}${andIfSession} RETURNING 1)`,
    );
  }

  const keyed = ws.events.some((e) => typeof e.metadata.client_id === 'string');
  if (ws.events.length > 0) {
    const columns: unknown[][] = EVENT_TYPES.map(() => []);
    // Client ids are inserted in one order everywhere, so that two transactions inserting the same
    // ids wait for each other in the same direction instead of deadlocking.
    for (const e of keyed ? [...ws.events].sort(byClientId) : ws.events) {
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
    const insert = `INSERT INTO events (${EVENT_COLUMNS}) SELECT * FROM unnest(${arrays.join(', ')})${ifSession}`;
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
  }

  const written = ws.session ? 'EXISTS (SELECT FROM s)' : 'true';
  const result = `SELECT ${written} AS written${duplicates}`;
  const text = parts.length > 0 ? `WITH ${parts.join(', ')} ${result}` : result;
  return { statement: { name: `write-${shape.join('-') || 'nothing'}`, text, values }, profile, keyed };
}
