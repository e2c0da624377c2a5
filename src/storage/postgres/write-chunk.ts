/**
 * The write sets of a chunk in one statement (docs/architecture.md#the-write-path): one multi-row
 * part per kind of write (sessions inserted, sessions updated, profiles created, profiles updated,
 * events, contexts), each taking its rows from arrays (`unnest`), and each write set's conflicts
 * read from the statement's answer. One file because the statement and the reading of its answer
 * share the numbering of the write sets (`ws`, their place in the chunk).
 */
import type pg from 'pg';
import type { EventRecord, WriteSet } from '../../model/records.js';
import { shareContext } from '../contexts.js';
import type { ProfilePlan } from './profile-plan.js';
import { byClientId, compareClientIds, EVENT_COLUMNS, EVENT_TYPES, eventRow, recordsTouch } from './rows.js';
import { storable } from './statements.js';

export interface ChunkEntry {
  ws: WriteSet;
  plan: ProfilePlan;
}

/** A write set of the chunk: a conflict (nothing of it written), or written with these duplicates. */
export type ChunkOutcome = { conflict: 'profile' | 'session' } | { duplicates: string[] };

/** A column of rows sent as an array: its name, its type, its values. */
type Column = [string, string, unknown[]];

interface ChunkAnswer {
  /** The write sets whose profile to keep is gone. */
  bad?: number[];
  /** The write sets not written: those of `bad` and those whose session write found a conflict. */
  failed?: number[];
  /** The ids of the events with client ids that were inserted. */
  inserted?: string[];
}

/** Writes the entries with one statement and answers each one's outcome, in order. */
export async function writeChunk(client: pg.PoolClient, entries: ChunkEntry[]): Promise<ChunkOutcome[]> {
  const { keyedIds, ...statement } = planChunk(entries);
  const { rows } = await client.query<ChunkAnswer>(statement);
  const answer = rows[0] ?? {};
  const bad = new Set(answer.bad);
  const failed = new Set(answer.failed);
  const inserted = new Set(answer.inserted);
  return keyedIds.map((ids, slot): ChunkOutcome => {
    if (bad.has(slot)) return { conflict: 'profile' };
    if (failed.has(slot)) return { conflict: 'session' };
    return { duplicates: ids.filter((id) => !inserted.has(id)) };
  });
}

/**
 * The statement. Everything a write set writes depends on its gate: the profile it only requires
 * exists (key-share locked, in id order, so that a merge or an erasure waits for it or it sees the
 * profile gone), then its session is inserted if absent or updated at the expected version. A
 * write set whose gate fails is in `failed` and none of its rows pass the filters of the parts that
 * follow. Events with client ids are inserted in client-id order (rows.ts: byClientId), each one
 * not inserted when its client id is stored for its source or comes earlier in the statement (the
 * unique index decides); a context kept once is written only when one of its events is. The text
 * depends only on which parts are present, so each shape is prepared once per connection.
 */
function planChunk(entries: ChunkEntry[]): {
  name: string;
  text: string;
  values: unknown[];
  /** Each entry's events with client ids, by id, in client-id order. */
  keyedIds: string[][];
} {
  const values: unknown[] = [];
  const param = (column: unknown[], type: string) => {
    values.push(storable(column));
    return `$${values.length}::${type}[]`;
  };
  /**
   * `… AS t` giving the columns as rows, each `[name, type, values]`, and the parameters of those
   * sent as arrays. A document column (json, every row's document set) is sent as one JSON array
   * instead, each row taking its element: its documents cross as they are, where an array of texts
   * would escape every quote on the way and unescape it on arrival.
   */
  const unnest = (columns: Column[]) => {
    const arrays = columns.filter(([, type]) => type !== 'json');
    const docs = columns.filter(([, type]) => type === 'json');
    const refs = arrays.map(([, type, column]) => param(column, type));
    const elements = docs.map(([, , column]) => {
      values.push(`[${column.join(',')}]`);
      return `json_array_elements($${values.length}::json)`;
    });
    const functions = [...refs.map((ref) => `unnest(${ref})`), ...elements].join(', ');
    const names = [...arrays, ...docs].map(([name]) => name);
    return { refs, from: `ROWS FROM (${functions}) AS t(${names.join(', ')})` };
  };
  const rows = (columns: Column[]) => unnest(columns).from;
  const slotOf = new Map(entries.map((e, slot) => [e, slot]));
  const slots = (picked: ChunkEntry[]) => picked.map((e) => slotOf.get(e)!);
  const shape: string[] = [];
  const parts: string[] = [];
  const failures: string[] = [];
  const answer: string[] = [];

  const guarded = entries.filter((e) => e.plan.guard !== null);
  let notBad = 'true';
  if (guarded.length > 0) {
    shape.push('k');
    const ws = param(slots(guarded), 'integer');
    const ids = param(
      guarded.map((e) => e.plan.guard),
      'text',
    );
    parts.push(
      `k AS (SELECT g.ws FROM profiles p JOIN unnest(${ws}, ${ids}) AS g(ws, id) ON p.id = g.id ORDER BY p.id FOR KEY SHARE OF p)`,
      `bad AS (SELECT g.ws FROM unnest(${ws}) AS g(ws) WHERE g.ws NOT IN (SELECT ws FROM k))`,
    );
    failures.push('SELECT ws FROM bad');
    answer.push('ARRAY(SELECT ws FROM bad) AS bad');
    notBad = 't.ws NOT IN (SELECT ws FROM bad)';
  }

  const sessionColumns = (picked: ChunkEntry[]): Column[] => {
    return [
      ['ws', 'integer', slots(picked)],
      ['id', 'text', picked.map((e) => e.ws.session!.record.id)],
      ['profile_id', 'text', picked.map((e) => e.ws.session!.record.profile?.id ?? null)],
      ['raw', 'json', picked.map((e) => JSON.stringify(e.ws.session!.record))],
    ];
  };
  const inserts = entries.filter((e) => e.ws.session?.expectVersion === null);
  if (inserts.length > 0) {
    shape.push('si');
    const { refs, from } = unnest(sessionColumns(inserts));
    parts.push(
      `si AS (INSERT INTO sessions (id, profile_id, version, raw) SELECT t.id, t.profile_id, 1, t.raw FROM ${from} WHERE ${notBad} ON CONFLICT (id) DO NOTHING RETURNING id)`,
    );
    failures.push(
      `SELECT t.ws FROM unnest(${refs[0]}, ${refs[1]}) AS t(ws, id) WHERE t.id NOT IN (SELECT id FROM si)`,
    );
  }
  const updates = entries.filter((e) => typeof e.ws.session?.expectVersion === 'number');
  if (updates.length > 0) {
    shape.push('su');
    const columns = sessionColumns(updates);
    columns.splice(2, 0, ['version', 'integer', updates.map((e) => e.ws.session!.expectVersion)]);
    const { refs, from } = unnest(columns);
    parts.push(
      `su AS (UPDATE sessions s SET profile_id = t.profile_id, doc = NULL, raw = t.raw, version = s.version + 1 FROM ${from} WHERE s.id = t.id AND s.version = t.version AND ${notBad} RETURNING t.ws)`,
    );
    failures.push(`SELECT t.ws FROM unnest(${refs[0]}) AS t(ws) WHERE t.ws NOT IN (SELECT ws FROM su)`);
  }
  if (failures.length > 0) {
    parts.push(`failed AS (${failures.join(' UNION ALL ')})`);
    answer.push('ARRAY(SELECT ws FROM failed) AS failed');
  }
  const gate = failures.length > 0 ? 't.ws NOT IN (SELECT ws FROM failed)' : 'true';

  const profileColumns = (picked: ChunkEntry[]): Column[] => {
    return [
      ['ws', 'integer', slots(picked)],
      ['id', 'text', picked.map((e) => e.plan.profile!.id)],
      ['raw', 'json', picked.map((e) => JSON.stringify(e.plan.profile))],
    ];
  };
  const created = entries.filter((e) => e.ws.profile?.op === 'create');
  if (created.length > 0) {
    shape.push('pc');
    parts.push(
      `pc AS (INSERT INTO profiles (id, raw) SELECT t.id, t.raw FROM ${rows(profileColumns(created))} WHERE ${gate})`,
    );
  }
  const changed = entries.filter((e) => e.ws.profile?.op !== 'create' && e.plan.profile && e.plan.changed);
  if (changed.length > 0) {
    shape.push('pu');
    parts.push(
      `pu AS (UPDATE profiles p SET doc = NULL, raw = t.raw FROM ${rows(profileColumns(changed))} WHERE p.id = t.id AND ${gate})`,
    );
  }

  // Each event's row: its write set, its columns, and the context kept once it names, if any.
  const keyed: unknown[][] = [];
  const plain: unknown[][] = [];
  const contexts: [id: string, size: number, text: string][] = [];
  const keyedIds = entries.map(({ ws }, slot) => {
    const shared = shareContext(ws);
    const events = shared?.events ?? ws.events;
    // A context kept once is named by every event of the write set (the id of its first event).
    const contextId = shared ? events[0]!.id : null;
    if (shared) contexts.push([contextId!, shared.text.length, shared.text]);
    const withIds: EventRecord[] = [];
    for (const e of events) {
      const withId = typeof e.metadata.client_id === 'string';
      (withId ? keyed : plain).push([slot, ...eventRow(e, recordsTouch(ws, e)), contextId]);
      if (withId) withIds.push(e);
    }
    return withIds.sort(byClientId).map((e) => e.id);
  });
  const withContexts = contexts.length > 0;
  const eventNames = [...EVENT_COLUMNS, ...(withContexts ? ['context_id'] : [])];
  const eventTypes = [...EVENT_TYPES, 'text'];
  const eventRows = (picked: unknown[][]) =>
    rows([
      ['ws', 'integer', picked.map((row) => row[0])],
      ...eventNames.map((name, i): Column => [name, eventTypes[i]!, picked.map((row) => row[i + 1])]),
    ]);
  const insert = `INSERT INTO events (${eventNames.join(', ')}) SELECT ${eventNames.map((n) => `t.${n}`).join(', ')}`;
  const named: string[] = [];
  if (keyed.length > 0) {
    shape.push('ek');
    const clientId = 1 + EVENT_COLUMNS.indexOf('client_id');
    // Stable: of one client id, the event of the earlier write set, or earlier in it, comes first.
    keyed.sort((a, b) => compareClientIds(a[clientId] as string, b[clientId] as string));
    parts.push(
      `ek AS (${insert} FROM ${eventRows(keyed)} WHERE ${gate} ON CONFLICT (client_id, source_id) WHERE client_id IS NOT NULL DO NOTHING RETURNING id${withContexts ? ', context_id' : ''})`,
    );
    answer.push('ARRAY(SELECT id FROM ek) AS inserted');
    named.push('SELECT context_id FROM ek');
  }
  if (plain.length > 0) {
    shape.push('e');
    parts.push(
      `e AS (${insert} FROM ${eventRows(plain)} WHERE ${gate}${withContexts ? ' RETURNING context_id' : ''})`,
    );
    named.push('SELECT context_id FROM e');
  }
  if (withContexts && named.length > 0) {
    // Written only when an event naming it was (none is when all prove duplicates, or on a conflict).
    shape.push('c');
    parts.push(
      `c AS (INSERT INTO event_contexts (id, size, raw) SELECT t.id, t.size, t.raw FROM ${rows([
        ['id', 'text', contexts.map((c) => c[0])],
        ['size', 'integer', contexts.map((c) => c[1])],
        ['raw', 'json', contexts.map((c) => c[2])],
      ])} WHERE t.id IN (${named.join(' UNION ALL ')}))`,
    );
  }

  const result = `SELECT ${answer.length > 0 ? answer.join(', ') : 'true AS written'}`;
  const text = parts.length > 0 ? `WITH ${parts.join(', ')} ${result}` : result;
  return { name: `write-chunk-${shape.join('-') || 'nothing'}`, text, values, keyedIds };
}
