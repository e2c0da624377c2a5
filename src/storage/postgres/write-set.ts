import type { ProfileRecord, WriteSet } from '../../model/records.js';
import { shareContext } from '../contexts.js';
import { planProfile, type ProfilePlan } from './profile-plan.js';
import { byClientId, EVENT_COLUMNS, EVENT_TYPES, eventRow, recordsTouch } from './rows.js';

/** The statement that writes one write set, the profile it leaves, or the conflict known beforehand. */
export type WritePlan =
  | { conflict: 'profile' }
  | (ProfilePlan & {
      statement: { name: string; text: string; values: unknown[] };
      /** True when the statement answers `duplicates`: its events carry client ids. */
      keyed: boolean;
    });

/**
 * Plans one write set as a single statement. The session write (insert if absent, or update at the
 * expected version) comes first and everything else is written only when it wrote a row, so that a
 * session conflict writes nothing; the statement answers `written` false then. The profile is
 * planned by `planProfile` (a profile conflict sends nothing). A write set that only
 * requires its profile to exist takes a key-share lock on it in the statement (so that a merge or
 * an erasure waits for it, or it sees the profile gone) and writes nothing without it: the
 * statement answers `profile_ok` false then.
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

  const planned = planProfile(ws, current);
  if ('conflict' in planned) return planned;
  const { profile, changed, guard } = planned;
  const p = ws.profile;
  const guarded = guard !== null;
  if (guarded) {
    shape.push('k');
    parts.push(`k AS (SELECT FROM profiles WHERE id = ${param(guard, 'text')} FOR KEY SHARE)`);
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
    const id = param(record.id);
    const profileId = param(record.profile?.id ?? null, 'text');
    const raw = param(JSON.stringify(record), 'json');
    if (expectVersion === null) {
      shape.push('si');
      const where = ifGuard.length ? ` WHERE ${ifGuard.join(' AND ')}` : '';
      parts.push(
        `s AS (INSERT INTO sessions (id, profile_id, version, raw) SELECT ${id}, ${profileId}, 1, ${raw}${where} ON CONFLICT (id) DO NOTHING RETURNING 1)`,
      );
    } else {
      shape.push('su');
      const version = param(expectVersion, 'integer');
      const and = ifGuard.map((c) => ` AND ${c}`).join('');
      parts.push(
        `s AS (UPDATE sessions SET profile_id = ${profileId}, doc = NULL, raw = ${raw}, version = version + 1 WHERE id = ${id} AND version = ${version}${and} RETURNING 1)`,
      );
    }
  }
  const conditions = [...ifGuard, ...(ws.session ? ['EXISTS (SELECT FROM s)'] : [])];
  // `WHERE true` when nothing else: INSERT … SELECT … ON CONFLICT needs a WHERE to parse.
  const where = ` WHERE ${conditions.length ? conditions.join(' AND ') : 'true'}`;
  const and = conditions.map((c) => ` AND ${c}`).join('');

  if (p?.op === 'create') {
    shape.push('pc');
    parts.push(
      `p AS (INSERT INTO profiles (id, raw) SELECT ${param(p.record.id, 'text')}, ${param(JSON.stringify(p.record), 'json')}${where} RETURNING 1)`,
    );
  } else if (profile && changed) {
    shape.push('pu');
    parts.push(
      `p AS (UPDATE profiles SET doc = NULL, raw = ${param(JSON.stringify(profile), 'json')} WHERE id = ${param(profile.id)}${and} RETURNING 1)`,
    );
  }

  const keyed = ws.events.some((e) => typeof e.metadata.client_id === 'string');
  if (ws.events.length > 0) {
    const shared = shareContext(ws);
    const events = shared?.events ?? ws.events;
    const columns: unknown[][] = EVENT_TYPES.map(() => []);
    for (const e of keyed ? [...events].sort(byClientId) : events) {
      eventRow(e, recordsTouch(ws, e)).forEach((value, i) => columns[i]!.push(value));
    }
    const arrays = columns.map((column, i) => param(column, `${EVENT_TYPES[i]}[]`));
    // A context kept once is named by every event of the write set (the id of its first event).
    const contextId = shared ? param(events[0]!.id, 'text') : null;
    const insert = contextId
      ? `INSERT INTO events (${EVENT_COLUMNS.join(', ')}, context_id) SELECT u.*, ${contextId} FROM unnest(${arrays.join(', ')}) u${where}`
      : `INSERT INTO events (${EVENT_COLUMNS.join(', ')}) SELECT * FROM unnest(${arrays.join(', ')})${where}`;
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
      parts.push(
        `c AS (INSERT INTO event_contexts (id, size, raw) SELECT ${contextId}, ${param(shared.text.length, 'integer')}, ${param(shared.text, 'json')} WHERE EXISTS (SELECT FROM e))`,
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

  return { statement: { name, text, values }, ...planned, keyed };
}
