/**
 * Every write of the embedded store, run by the writer thread (writer.ts) on the one connection that
 * writes: group-commit batches of write sets, the management writes, and the
 * session and profile reads of the tracking path.
 */
import type Database from 'better-sqlite3';
import type { ProfileRecord } from '../../model/records.js';
import { applyVisit } from '../../model/profiles.js';
import type { ErasedCounts } from '../store.js';
import { prepareDestinationWrites } from './destination-writes.js';
import { writeStatements } from './statements.js';
import { errorShape } from './errors.js';
import { runsOfRows, type EventRow, type RowOutcome, type WriteRow } from './write-set.js';

/** A stored session as read: its document, version, and the time of its latest request (or null). */
type SessionRow = [doc: string, version: number, updateTime: string | null];

/** The write operations, by name: what the service's thread may ask the writer thread to do. */
export function prepareWrites(db: Database.Database) {
  const s = writeStatements(db);
  // Runs are numbered in commit order and a number is never given twice, so that delivery can
  // follow them with a cursor: each transaction starts above every run stored or ever deleted
  // (migrations.ts: run_high), read under its write lock. A rolled-back batch leaves a gap.
  const firstFree = () => s.firstFreeRun.get() as number;
  let nextRun = 0;

  /**
   * Writes one write set inside the batch transaction. Everything that can conflict is checked before
   * the first write, so a conflicting write set leaves no trace.
   */
  /**
   * The events of a keyed write set without the duplicates: those whose client id is stored for their
   * source, or came earlier in the write set (docs/api.md#duplicates). One look-up for all of them.
   */
  const dropDuplicates = (rows: EventRow[]): { kept: EventRow[]; duplicates: string[] } => {
    const key = (clientId: string, sourceId: string) => JSON.stringify([clientId, sourceId]);
    const pairs = rows.filter((r) => r[7] !== null).map((r) => [r[7], r[1]]);
    const seen = new Set(
      (s.storedClientIds.all(JSON.stringify(pairs)) as [string, string][]).map(([c, source]) =>
        key(c, source),
      ),
    );
    const kept: EventRow[] = [];
    const duplicates: string[] = [];
    for (const row of rows) {
      const clientId = row[7];
      if (clientId !== null) {
        const k = key(clientId, row[1]);
        if (seen.has(k)) {
          duplicates.push(row[4]);
          continue;
        }
        seen.add(k);
      }
      kept.push(row);
    }
    return { kept, duplicates };
  };

  const apply = ([session, profile, eventRuns, touch, keyed]: WriteRow): RowOutcome => {
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
    if (touch) {
      const seq = s.touchSession.get(touch[1], touch[0]) as number | undefined;
      if (seq !== undefined) written = { id: touch[0], seq };
    }
    let visitedDoc: string | null = null;
    if (profile?.[0] === 'create') s.insertProfile.run(profile[1], profile[2]);
    else if (visited) {
      visitedDoc = JSON.stringify(visited);
      s.updateProfile.run(visitedDoc, visited.id);
    }
    let runs = eventRuns;
    let duplicates: string[] = [];
    if (keyed) {
      const { kept, duplicates: dropped } = dropDuplicates(keyed);
      runs = runsOfRows(kept);
      duplicates = dropped;
    }
    for (const [time, source, sessionId, profileId, ids, types, docs, clientIds, oob] of runs) {
      const seq =
        sessionId === null
          ? null
          : sessionId === written?.id
            ? written.seq
            : ((s.sessionSeq.get(sessionId) as number | undefined) ?? null);
      s.insertRun.run(nextRun++, time, source, sessionId, seq, profileId, ids, types, docs, clientIds, oob);
    }
    return { ok: true, visited: visitedDoc, duplicates };
  };

  // Many requests' write sets in one transaction. Conflicts are found before a write set writes
  // anything, so they need no savepoint; any other failure rolls the batch back and each write set
  // is then tried alone, so one bad write set never fails the others.
  // Transactions that write begin IMMEDIATE: a deferred one that reads first (a visit reads the
  // profile) could not take the write lock once another process had committed since its read,
  // and would fail at once instead of waiting for the lock.
  const batch = db.transaction((rows: WriteRow[]) => {
    nextRun = firstFree();
    return rows.map(apply);
  }).immediate;
  const single = db.transaction((row: WriteRow) => {
    nextRun = firstFree();
    return apply(row);
  }).immediate;

  return {
    ...prepareDestinationWrites(db, firstFree),
    /**
     * Sessions by id, for the tracking path: this connection's page cache stays warm (it made the
     * changes), where a reading connection's cache is dropped after every commit of this one.
     * One read transaction for all of them: outside one, each lookup would be a transaction of its
     * own, taking and releasing the file's and the log's read locks (system calls) every time.
     */
    readSessions: db.transaction((ids: string[]): (SessionRow | null)[] =>
      ids.map((id) => (s.getSession.get(id) as SessionRow | undefined) ?? null),
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
    putRejected(id: string, time: string, sourceId: string, eventTypes: string, doc: string): number {
      const size = Buffer.byteLength(doc);
      s.putRejected.run(id, time, sourceId, eventTypes, doc, size);
      return size;
    },
    deleteRejected(id: string): boolean {
      return s.deleteRejected.run(id).changes > 0;
    },
    /**
     * Deletes the oldest runs inserted before `before`, about `maxEvents` events' worth (at least one
     * run, however many events it holds), in one short transaction; answers how many events went.
     */
    deleteEventsBefore: db.transaction((before: string, maxEvents: number): number => {
      let events = 0;
      for (const [run, count] of s.oldRuns.all(before, maxEvents) as [number, number][]) {
        if (events > 0 && events + count > maxEvents) break;
        s.deleteRun.run(run);
        events += count;
      }
      return events;
    }).immediate,
    pruneRejected(before: string, keep: number, maxBytes: number): number {
      return (
        s.pruneRejectedAge.run(before).changes +
        s.pruneRejectedCount.run(keep).changes +
        s.pruneRejectedBytes.run(maxBytes).changes
      );
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
