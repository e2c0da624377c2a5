/**
 * Every write of the embedded store, run by the writer thread (writer.ts) on the one connection that
 * writes: migrations at open, group-commit batches of write sets, the management writes, and the
 * session and profile reads of the tracking path.
 */
import type Database from 'better-sqlite3';
import type { ProfileRecord } from '../../model/records.js';
import { applyVisit } from '../../model/profiles.js';
import type { ErasedCounts } from '../store.js';
import { migrations } from './migrations.js';
import { errorShape } from './errors.js';
import type { RowOutcome, WriteRow } from './rows.js';

/** Log size past which the writer checkpoints itself (RESTART), when the checkpointer falls behind. */
export const WAL_LIMIT_BYTES = 128 * 1024 * 1024;

/** The settings of the one connection that writes (the writer thread's, and the write-path bench's). */
export function configureWriter(db: Database.Database, sync: 'normal' | 'full'): void {
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${sync === 'full' ? 'FULL' : 'NORMAL'}`);
  db.pragma('busy_timeout = 5000');
  db.pragma('temp_store = MEMORY');
  // The log is copied back into the database file by a thread of its own (checkpointer.ts), so that
  // commits never wait for that copy and its fsync.
  db.pragma('wal_autocheckpoint = 0');
  // When the log starts again from its beginning, the file is cut back to this size only: keeping it
  // at its working size lets the next round overwrite blocks the file system has already allocated.
  // Cut back to 64 MB, every round allocated them again: 7-11% fewer 1-event requests/s in three
  // alternating pairs of 15 s runs.
  db.pragma(`journal_size_limit = ${4 * WAL_LIMIT_BYTES}`);
}

/** Applies the migrations the file lacks; `PRAGMA user_version` counts those applied. */
export function migrate(db: Database.Database): void {
  const applied = db.pragma('user_version', { simple: true }) as number;
  for (let i = applied; i < migrations.length; i++) {
    db.transaction(() => {
      db.exec(migrations[i]!);
      db.pragma(`user_version = ${i + 1}`);
    })();
  }
}

/** The write operations, by name: what the service's thread may ask the writer thread to do. */
export function prepareWrites(db: Database.Database) {
  const s = {
    putSource: db.prepare(
      'INSERT INTO sources (id, doc) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc',
    ),
    deleteSource: db.prepare('DELETE FROM sources WHERE id = ?'),
    // No RETURNING here: SQLite gathers returned rows in a temporary b-tree made and dropped per
    // statement, 1-2 µs more per insert than reading the new row id (`seq` is the row id).
    insertSession: db.prepare(
      'INSERT INTO sessions (id, profile_id, version, doc) VALUES (?, ?, 1, ?) ON CONFLICT (id) DO NOTHING',
    ),
    // Answers the session's seq, or nothing when it wrote no row (a conflict). RETURNING costs an
    // update no more than looking the seq up afterwards.
    updateSession: db
      .prepare(
        'UPDATE sessions SET profile_id = ?, doc = ?, version = version + 1 WHERE id = ? AND version = ? RETURNING seq',
      )
      .pluck(),
    getProfile: db.prepare('SELECT doc FROM profiles WHERE id = ?').pluck(),
    getSession: db.prepare('SELECT doc, version FROM sessions WHERE id = ?').raw(),
    insertProfile: db.prepare('INSERT INTO profiles (id, doc) VALUES (?, ?)'),
    updateProfile: db.prepare('UPDATE profiles SET doc = ? WHERE id = ?'),
    sessionSeq: db.prepare('SELECT seq FROM sessions WHERE id = ?').pluck(),
    // OR FAIL (for the run and, overriding theirs, the statements of its triggers): with the default
    // ABORT, SQLite copies every page the statement changes into a statement journal, to undo this
    // one statement alone if it fails. Nothing here needs that: a failure rolls back the whole
    // transaction (see `commit`). Without the copies the write path takes 5-6% less CPU per first
    // visit (36.6 against 38.8 µs, seven alternating runs of 300,000 visits).
    insertRun: db.prepare(
      'INSERT OR FAIL INTO event_runs (insert_time, source_id, session_id, session_seq, profile_id, ids, types, docs) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    eraseSessionEvents: db
      .prepare(
        'DELETE FROM event_runs WHERE session_seq IN (SELECT seq FROM sessions WHERE profile_id = ?) RETURNING json_array_length(ids)',
      )
      .pluck(),
    eraseUnstoredSessionEvents: db
      .prepare(
        `DELETE FROM event_runs WHERE session_seq IS NULL AND session_id IS NOT NULL
           AND session_id IN (SELECT id FROM sessions WHERE profile_id = ?) RETURNING json_array_length(ids)`,
      )
      .pluck(),
    eraseProfileEvents: db
      .prepare('DELETE FROM event_runs WHERE profile_id = ? RETURNING json_array_length(ids)')
      .pluck(),
    eraseSessions: db.prepare('DELETE FROM sessions WHERE profile_id = ?'),
    eraseProfile: db.prepare('DELETE FROM profiles WHERE id = ?'),
    putEventType: db.prepare(
      'INSERT INTO event_types (event_type, doc) VALUES (?, ?) ON CONFLICT (event_type) DO UPDATE SET doc = excluded.doc',
    ),
    deleteEventType: db.prepare('DELETE FROM event_types WHERE event_type = ?'),
    putRejected: db.prepare(
      'INSERT INTO rejected (id, time, source_id, event_types, doc) VALUES (?, ?, ?, ?, ?)',
    ),
    deleteRejected: db.prepare('DELETE FROM rejected WHERE id = ?'),
    pruneRejectedAge: db.prepare('DELETE FROM rejected WHERE time < ?'),
    pruneRejectedCount: db.prepare(
      'DELETE FROM rejected WHERE id IN (SELECT id FROM rejected ORDER BY time DESC, id DESC LIMIT -1 OFFSET ?)',
    ),
  };

  /**
   * Writes one write set inside the batch transaction. Everything that can conflict is checked before
   * the first write, so a conflicting write set leaves no trace.
   */
  const apply = ([session, profile, runs]: WriteRow): RowOutcome => {
    let visited: ProfileRecord | null = null;
    if (profile?.[0] === 'visit') {
      const doc = s.getProfile.get(profile[1]) as string | undefined;
      if (doc === undefined) return { ok: false, conflict: 'profile' };
      visited = applyVisit(JSON.parse(doc) as ProfileRecord, profile[2]);
    }
    let written: { id: string; seq: number } | null = null;
    if (session) {
      const [id, profileId, doc, expectVersion] = session;
      let seq: number | undefined;
      if (expectVersion === null) {
        const inserted = s.insertSession.run(id, profileId, doc);
        if (inserted.changes > 0) seq = Number(inserted.lastInsertRowid);
      } else {
        seq = s.updateSession.get(profileId, doc, id, expectVersion) as number | undefined;
      }
      if (seq === undefined) return { ok: false, conflict: 'session' };
      written = { id, seq };
    }
    let visitedDoc: string | null = null;
    if (profile?.[0] === 'create') s.insertProfile.run(profile[1], profile[2]);
    else if (visited) {
      visitedDoc = JSON.stringify(visited);
      s.updateProfile.run(visitedDoc, visited.id);
    }
    for (const [time, source, sessionId, profileId, ids, types, docs] of runs) {
      const seq =
        sessionId === null
          ? null
          : sessionId === written?.id
            ? written.seq
            : ((s.sessionSeq.get(sessionId) as number | undefined) ?? null);
      s.insertRun.run(time, source, sessionId, seq, profileId, ids, types, docs);
    }
    return { ok: true, visited: visitedDoc };
  };

  // Many requests' write sets in one transaction. Conflicts are found before a write set writes
  // anything, so they need no savepoint; any other failure rolls the batch back and each write set
  // is then tried alone, so one bad write set never fails the others.
  // Transactions that write begin IMMEDIATE: a deferred one that reads first (a visit reads the
  // profile) could not take the write lock once another process had committed since its read,
  // and would fail at once instead of waiting for the lock.
  const batch = db.transaction((rows: WriteRow[]) => rows.map(apply)).immediate;
  const single = db.transaction(apply).immediate;

  return {
    /**
     * Sessions by id, for the tracking path: this connection's page cache stays warm (it made the
     * changes), where a reading connection's cache is dropped after every commit of this one.
     * One read transaction for all of them: outside one, each lookup would be a transaction of its
     * own, taking and releasing the file's and the log's read locks (system calls) every time.
     */
    readSessions: db.transaction((ids: string[]): ([string, number] | null)[] =>
      ids.map((id) => (s.getSession.get(id) as [string, number] | undefined) ?? null),
    ),
    readProfiles: db.transaction((ids: string[]): (string | null)[] =>
      ids.map((id) => (s.getProfile.get(id) as string | undefined) ?? null),
    ),
    commit(rows: WriteRow[]): RowOutcome[] {
      try {
        return batch(rows);
      } catch (error) {
        if (rows.length === 1) return [{ ok: false, error: errorShape(error) }];
        return rows.map((row): RowOutcome => {
          try {
            return single(row);
          } catch (rowError) {
            return { ok: false, error: errorShape(rowError) };
          }
        });
      }
    },
    putSource(id: string, doc: string): void {
      s.putSource.run(id, doc);
    },
    deleteSource(id: string): boolean {
      return s.deleteSource.run(id).changes > 0;
    },
    putEventType(eventType: string, doc: string): void {
      s.putEventType.run(eventType, doc);
    },
    deleteEventType(eventType: string): boolean {
      return s.deleteEventType.run(eventType).changes > 0;
    },
    putRejected(id: string, time: string, sourceId: string, eventTypes: string, doc: string): void {
      s.putRejected.run(id, time, sourceId, eventTypes, doc);
    },
    deleteRejected(id: string): boolean {
      return s.deleteRejected.run(id).changes > 0;
    },
    pruneRejected(before: string, keep: number): number {
      return s.pruneRejectedAge.run(before).changes + s.pruneRejectedCount.run(keep).changes;
    },
    eraseProfile: db.transaction((id: string): ErasedCounts | null => {
      if (s.getProfile.get(id) === undefined) return null;
      const counts = [
        ...s.eraseSessionEvents.all(id),
        ...s.eraseUnstoredSessionEvents.all(id),
        ...s.eraseProfileEvents.all(id),
      ] as number[];
      const events = counts.reduce((sum, n) => sum + n, 0);
      const sessions = s.eraseSessions.run(id).changes;
      const profiles = s.eraseProfile.run(id).changes;
      return { profiles, sessions, events };
    }).immediate,
  };
}

export type WriteOps = ReturnType<typeof prepareWrites>;
