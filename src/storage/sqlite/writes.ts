/**
 * Every write of the embedded store, run by the writer thread (writer.ts) on the one connection that
 * writes: group-commit batches of write sets, the management writes, and the
 * session and profile reads of the tracking path.
 * One file because the batch transaction and the writes it is made of share their statements and
 * checks; the management writes are a few lines each.
 */
import type Database from 'better-sqlite3';
import { diffOf, type ProfileDiff } from '../../model/profile-diff.js';
import type { IdentityKey, ProfileChange, ProfileRecord } from '../../model/records.js';
import {
  applyOps,
  applyOpsInPlace,
  splitChange,
  withoutEvents,
  type ProfileOp,
} from '../../model/profile-ops.js';
import { applyVisit, newProfile } from '../../model/profiles.js';
import { holdClock } from './held-profiles.js';
import { profileWrites } from './profiles.js';
import type { ErasedCounts } from '../store.js';
import { prepareDestinationWrites } from './destination-writes.js';
import { prepareRejectedWrites } from './rejected-writes.js';
import { writeStatements } from './statements.js';
import { errorShape } from './errors.js';
import { decodeChange } from './change-text.js';
import { runsOfRows, type EventRow, type RowOutcome, type WriteRow } from './write-set.js';

/** A stored session as read: its document, version, and the time of its latest request (or null). */
type SessionRow = [doc: string, version: number, updateTime: string | null];

/**
 * The write operations, by name: what the service's thread may ask the writer thread to do. `hold`:
 * profile changes may be held (held-profiles.ts). Profiles a crash left held are written first.
 */
export function prepareWrites(db: Database.Database, hold: boolean) {
  const s = writeStatements(db);
  const profiles = profileWrites(s, hold);
  // The first use of the holds reads the log: what a crash left held is written here.
  db.transaction(() => profiles.flush('all')).immediate();
  const rejected = prepareRejectedWrites(db);
  // Runs are numbered in commit order and a number is never given twice, so that delivery can
  // follow them with a cursor: each transaction starts above every run stored or ever deleted
  // (migrations.ts: run_high), read under its write lock. A rolled-back batch leaves a gap.
  const firstFree = () => s.firstFreeRun.get() as number;
  let nextRun = 0;

  /**
   * Writes one write set inside the batch transaction. Everything that can conflict is checked before
   * the first write, so a conflicting write set leaves no trace: the session's version, and the
   * profile's existence (it may have been merged or erased since the request read it). The
   * profile's visit and operations are applied to its stored record; identities last, since they
   * may merge the profile (with the request's session and events) into another.
   */
  /**
   * The events of a keyed write set without the duplicates: those whose client id is stored for their
   * source, or came earlier in the write set (docs/api.md#duplicates). One look-up for all of them.
   */
  const dropDuplicates = (rows: EventRow[]): { kept: EventRow[]; duplicates: string[] } => {
    if (rows.length === 1) {
      // One event (most requests): one look-up of its key, without the JSON of the general case.
      const [, sourceId, , , id, , , clientId] = rows[0]!;
      if (clientId === null || s.clientIdStored.get(clientId, sourceId) === undefined) {
        return { kept: rows, duplicates: [] };
      }
      return { kept: [], duplicates: [id] };
    }
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

  /** The shapes texts the changes of the batch under way name (change-text.ts: shareShapes). */
  let shapes: readonly string[] = [];
  const apply = ([
    session,
    profile,
    eventRuns,
    touch,
    keyed,
    answer,
    replayOf,
    context,
  ]: WriteRow): RowOutcome => {
    if (replayOf !== null && !rejected.claim.held(replayOf)) return { ok: false, conflict: 'rejected' };
    // Duplicates first (reads only): their events are not stored, their operations not applied.
    let runs = eventRuns;
    let duplicates: string[] = [];
    if (keyed) {
      const { kept, duplicates: dropped } = dropDuplicates(keyed);
      runs = runsOfRows(kept, context);
      duplicates = dropped;
    }
    let current: ProfileRecord | null = null;
    let changed = false;
    let change: ProfileChange | null = null;
    // The operations to apply to `current` once nothing can conflict (they change it in place).
    let pending: ProfileOp[] | null = null;
    let identities: IdentityKey[] = [];
    if (profile) {
      const [op, id, arg, changeText] = profile;
      const sent = changeText === null ? null : decodeChange(changeText, shapes);
      change = sent && duplicates.length > 0 ? withoutEvents(sent, duplicates) : sent;
      const split = splitChange(change);
      const ops = split.ops;
      identities = split.identities;
      if (op === 'create') {
        changed = true;
        // Its document has the request's operations applied; when some came from duplicate events,
        // it is made again without them (a new profile is newProfile at the request's time).
        if (change !== sent && ops.length !== splitChange(sent).ops.length) {
          current = applyOps(newProfile(id, change!.at), ops, change!.at).profile;
        }
      } else if (op === 'visit' || ops.length > 0) {
        current = profiles.read(id);
        if (current === null) return { ok: false, conflict: 'profile' };
        if (op === 'visit') {
          current = applyVisit(current, arg!);
          changed = true;
        }
        if (ops.length > 0) pending = ops;
      } else if (s.profileExists.get(id) === undefined) return { ok: false, conflict: 'profile' };
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
    // No conflict from here on: the replayed record leaves the quarantine with this commit.
    if (replayOf !== null) rejected.claim.take(replayOf);
    // What the operations alone changed of a stored profile is held as its diff (profiles.ts:
    // changeBy), unless the document is wanted at once: answered, or identities to attach.
    let diff: ProfileDiff | null = null;
    if (pending !== null) {
      // The writer owns the records it reads (profiles.ts), and a change is held or written below.
      const applied = applyOpsInPlace(current!, pending, change!.at);
      if (applied.changed && !changed && !answer && identities.length === 0) {
        diff = diffOf(current!, applied.written, change!.at);
      }
      changed = applied.changed || changed;
    }
    // A run of the session stored at the request's time says when its latest request was (getSession
    // reads it): the session's row is written only when no event of it is stored.
    if (touch && !runs.some((run) => run[2] === touch[0] && run[0] >= touch[1])) {
      const seq = s.touchSession.get(touch[1], touch[0]) as number | undefined;
      if (seq !== undefined) written = { id: touch[0], seq };
    }
    const text: string | null = current && changed && diff === null ? JSON.stringify(current) : null;
    if (profile?.[0] === 'create') s.insertProfile.run(profile[1], text ?? profile[2]);
    else if (diff !== null) profiles.changeBy(current!, diff);
    else if (text !== null) profiles.change(current!, text);
    for (const [time, source, sessionId, profileId, ids, types, docs, clientIds, oob, runContext] of runs) {
      // A run names its session by seq only when the request counts as the session's activity (it
      // writes or touches the session): the newest such run is the session's latest request.
      // Others (saveSession: false) keep only the session's id, as for a session not stored.
      const seq =
        sessionId === null
          ? null
          : sessionId === written?.id
            ? written.seq
            : session !== null || touch !== null
              ? ((s.sessionSeq.get(sessionId) as number | undefined) ?? null)
              : null;
      s.insertRun.run(
        nextRun++,
        time,
        source,
        sessionId,
        seq,
        profileId,
        ids,
        types,
        docs,
        clientIds,
        oob,
        runContext,
      );
    }
    if (profile && identities.length > 0) {
      const base = current ?? profiles.read(profile[1])!;
      const attached = profiles.attach(base, identities, change!.at);
      const { merges, notes } = attached;
      const left = attached.changed ? attached.profile : base;
      const answered = answer || merges.length > 0 ? JSON.stringify(left) : null;
      return { ok: true, profile: answered, changed: changed || attached.changed, merges, notes, duplicates };
    }
    if (!answer || !current) return { ok: true, profile: null, changed, duplicates };
    return { ok: true, profile: text ?? JSON.stringify(current), changed, duplicates };
  };

  // Many requests' write sets in one transaction. Conflicts are found before a write set writes
  // anything, so they need no savepoint; any other failure rolls the batch back and each write set
  // is then tried alone, so one bad write set never fails the others.
  // Transactions that write begin IMMEDIATE: a deferred one that reads first (a visit reads the
  // profile) could not take the write lock once another process had committed since its read,
  // and would fail at once instead of waiting for the lock.
  // The profile changes a transaction held are logged in one row, last (profiles.ts: logged).
  const batch = db.transaction((rows: WriteRow[]) => {
    nextRun = firstFree();
    profiles.flush(holdClock());
    const outcomes = rows.map(apply);
    profiles.logged();
    return outcomes;
  }).immediate;
  const single = db.transaction((row: WriteRow) => {
    nextRun = firstFree();
    const outcome = apply(row);
    profiles.logged();
    return outcome;
  }).immediate;

  const flushTransaction = db.transaction((now: number | 'all') => profiles.flush(now)).immediate;
  const eraseTransaction = db.transaction((id: string): ErasedCounts | null => profiles.erase(id)).immediate;
  /** Runs a transaction that may write held profiles; if it fails, its holds are taken back. */
  const undone = <T>(transaction: () => T): T => {
    try {
      return transaction();
    } catch (error) {
      profiles.invalidate();
      throw error;
    }
  };

  return {
    ...prepareDestinationWrites(db, firstFree),
    ...rejected.ops,
    /**
     * Sessions by id, for the tracking path: this connection's page cache stays warm (it made the
     * changes), where a reading connection's cache is dropped after every commit of this one.
     * One read transaction for all of them: outside one, each lookup would be a transaction of its
     * own, taking and releasing the file's and the log's read locks (system calls) every time.
     */
    readSessions: db.transaction((ids: string[]): (SessionRow | null)[] =>
      ids.map((id) => (s.getSession.get(id) as SessionRow | undefined) ?? null),
    ),
    // A merged profile's id is an alias: it answers the survivor.
    readProfiles: db.transaction((ids: string[]): (string | null)[] =>
      ids.map((id) => {
        const doc = profiles.text(id);
        if (doc !== undefined) return doc;
        const target = s.aliasTarget.get(id) as string | undefined;
        return target === undefined ? null : (profiles.text(target) ?? null);
      }),
    ),
    /** The profile holding an identity, as JSON, or null. */
    readProfileByIdentity(type: string, value: string): string | null {
      const holder = s.identityHolder.get(type, value) as string | undefined;
      return holder === undefined ? null : (profiles.text(holder) ?? null);
    },
    /** `shared`: the shapes texts the rows' changes name by index (change-text.ts: shareShapes). */
    commit(rows: WriteRow[], shared: string[] = []): RowOutcome[] {
      shapes = shared;
      try {
        return batch(rows);
      } catch (error) {
        // The transaction's holds went with it: the next use holds again what the log holds.
        profiles.invalidate();
        if (rows.length === 1) return [{ ok: false, error: errorShape(error) }];
        return rows.map((row): RowOutcome => {
          try {
            return single(row);
          } catch (rowError) {
            profiles.invalidate();
            return { ok: false, error: errorShape(rowError) };
          }
        });
      }
    },
    /** Writes the held profiles that are due, or all of them (held-profiles.ts). */
    flushProfiles(all: boolean): void {
      if (!all && !profiles.due(holdClock())) return;
      undone(() => flushTransaction(all ? 'all' : holdClock()));
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
    putRejected(
      id: string,
      time: string,
      sourceId: string,
      sessionId: string | null,
      profileId: string | null,
      eventTypes: string,
      doc: string,
    ): number {
      const size = Buffer.byteLength(doc);
      s.putRejected.run(id, time, sourceId, sessionId, profileId, eventTypes, doc, size);
      return size;
    },
    putProfileRule: db.transaction((id: string, eventType: string, doc: string): string | null => {
      const previous = (s.ruleType.get(id) as string | undefined) ?? null;
      s.putProfileRule.run(id, eventType, doc);
      return previous;
    }).immediate,
    deleteProfileRule(id: string): string | null {
      return (s.deleteProfileRule.get(id) as string | undefined) ?? null;
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
    eraseProfile: (id: string): ErasedCounts | null => undone(() => eraseTransaction(id)),
  };
}

export type WriteOps = ReturnType<typeof prepareWrites>;
