/**
 * Profile changes on the writer's connection (writes.ts): a write set's profile operations,
 * identities attached by the unique key (type, value), merges into the profile that held an
 * identity first, and erasure. Run inside the writer's transactions, one at a time: what these read
 * is what they change.
 */
import { identityDecision, withIdentity } from '../../model/identities.js';
import { mergeProfiles } from '../../model/profile-merge.js';
import { profileOf } from '../../model/profiles.js';
import type { EventRecord, IdentityKey, MergeOutcome, ProfileRecord } from '../../model/records.js';
import type { ErasedCounts } from '../store.js';
import { applyDiffInPlace, type ProfileDiff } from '../../model/profile-diff.js';
import { HeldProfiles, holdClock } from './held-profiles.js';
import { ParsedProfiles } from './parsed-profiles.js';
import { encodeDiff, entryText, readLogRow, rowText, TRANSACTION_ROW } from './profile-log.js';
import type { writeStatements } from './statements.js';

type Statements = ReturnType<typeof writeStatements>;

export interface Attached {
  profile: ProfileRecord;
  /** True when the stored profile (or the survivor) was written. */
  changed: boolean;
  merges: MergeOutcome[];
  notes: string[];
}

/**
 * `hold`: whether changes may be held (held-profiles.ts), which needs this process to be the only
 * one writing the store.
 */
export function profileWrites(s: Statements, hold: boolean) {
  const parsed = new ParsedProfiles();
  const held = new HeldProfiles();
  /**
   * True while the holds may not be what the log holds: until the log is first read, and after a
   * rolled-back transaction (see invalidate).
   */
  let stale = true;
  /**
   * The changes of the transaction under way, as the entries of its log row (profile-log.ts),
   * written by `logged` before it commits; its row's seq and time, which its holds take.
   */
  let entries: string[] = [];
  let entrySeq = 0;
  let entryAt = 0;
  /** The highest log row used so far: each transaction's row comes after every other. */
  let lastSeq = 0;
  /**
   * The holds, as the last commit left them: the log is read again first when they may not be, and
   * while it cannot be, every use fails, so nothing is read or changed from holds that may not be
   * committed. Each change keeps the time it was committed at. Changes of profiles merged into
   * another since are not read; changes a profile's row already has (left for trimming) are held
   * again with their own times, so that profile's row is written again with the same document.
   */
  const fresh = (): HeldProfiles => {
    if (!stale) return held;
    const rows = s.profileLog.all() as [number, string, string, number][];
    held.clear();
    for (const [seq, rowProfile, doc, at] of rows) {
      lastSeq = Math.max(lastSeq, seq);
      for (const [id, change] of readLogRow(rowProfile, doc)) {
        if (s.profileExists.get(id) === undefined) continue;
        if ('doc' in change) {
          const text = JSON.stringify(change.doc);
          held.hold(id, { record: profileOf(change.doc), text, size: text.length, seq, at });
          continue;
        }
        // A diff applies to the profile as held before it, or as its row has it (profile-log.ts).
        let base: { record: ProfileRecord; size: number } | undefined = held.get(id);
        if (base === undefined) {
          const row = s.getProfile.get(id) as string;
          base = { record: profileOf(JSON.parse(row) as ProfileRecord), size: row.length };
        }
        applyDiffInPlace(base.record, change.diff);
        const size = base.size + encodeDiff(change.diff).length;
        held.hold(id, { record: base.record, text: null, size, seq, at });
      }
    }
    stale = false;
    return held;
  };
  /** A profile's document as the latest commit left it (held or stored), or undefined. */
  const text = (id: string): string | undefined => {
    const holding = fresh().get(id);
    if (holding) return (holding.text ??= JSON.stringify(holding.record));
    return s.getProfile.get(id) as string | undefined;
  };
  /**
   * A profile's record as the latest commit left it, or null. The writer owns it: a write set may
   * change it in place (writes.ts), once nothing can make it conflict, and then holds it (the holds
   * answer for it until its row is written) or writes it (the parsed records keep it with its text):
   * see change.
   */
  const read = (id: string): ProfileRecord | null => {
    const holding = fresh().get(id);
    if (holding) return holding.record;
    const doc = s.getProfile.get(id) as string | undefined;
    if (doc === undefined) return null;
    const known = parsed.get(id, doc);
    if (known) return known;
    const record = profileOf(JSON.parse(doc) as ProfileRecord);
    parsed.set(id, doc, record);
    return record;
  };
  const write = (id: string, record: ProfileRecord, doc: string) => {
    s.updateProfile.run(doc, id);
    parsed.set(id, doc, record);
  };
  /**
   * Writes the held profiles due at `now` (held-profiles.ts: take), or all of them, to their rows,
   * and drops the log rows no hold needs any more.
   */
  const flush = (now: number | 'all') => {
    const taken = fresh().take(now);
    if (taken.length === 0) return;
    for (const [id, holding] of taken)
      write(id, holding.record, holding.text ?? JSON.stringify(holding.record));
    const first = held.firstNeeded;
    if (first === Infinity) s.clearProfileLog.run();
    else s.trimProfileLog.run(first);
  };
  /**
   * Adds a held change's text to the transaction's log row and holds the record (text null: made
   * when first needed). The row is written by `logged`, before the transaction commits.
   */
  const logAndHold = (record: ProfileRecord, text: string, doc: string | null, size: number) => {
    const holds = fresh();
    // The parsed record (if the change started from it) may be this one, changed in place: its
    // text no longer says it. The hold answers until its row is written, which keeps it again.
    parsed.delete(record.id);
    if (entries.length === 0) {
      entrySeq = ++lastSeq;
      entryAt = holdClock();
    }
    entries.push(entryText(record.id, text));
    holds.hold(record.id, { record, text: doc, size, seq: entrySeq, at: entryAt });
  };
  /** A commit's new document of a stored profile: held when holding, else written at once. */
  const change = (record: ProfileRecord, doc: string): void => {
    if (!hold) write(record.id, record, doc);
    else logAndHold(record, doc, doc, doc.length);
  };
  /**
   * A change that operations alone made, in place, to a stored profile: when holding, its diff is
   * what is logged (profile-log.ts), and the document is made once needed. The first change since
   * the row was written logs its diff too, but makes the document, so that the hold knows its size.
   */
  const changeBy = (record: ProfileRecord, diff: ProfileDiff): void => {
    if (!hold) {
      write(record.id, record, JSON.stringify(record));
      return;
    }
    const before = fresh().get(record.id);
    const logged = encodeDiff(diff);
    if (before) logAndHold(record, logged, null, before.size + logged.length);
    else {
      const doc = JSON.stringify(record);
      logAndHold(record, logged, doc, doc.length);
    }
  };

  /** Everything of `from` becomes `into`'s: sessions, events, identities, aliases, refused requests. */
  const moveAll = (from: string, into: string) => {
    // Its hold goes with its row. Its logged changes stay until trimmed; fresh() skips them.
    fresh().drop(from);
    s.moveSessions.run({ into, from });
    for (const [run, docs] of s.profileRuns.all(from) as [number, string][]) {
      const events = JSON.parse(docs) as EventRecord[];
      for (const event of events) event.profile = { id: into };
      s.moveRun.run(into, JSON.stringify(events), run);
    }
    s.moveIdentities.run(into, from);
    s.moveAliases.run(into, from);
    s.insertAlias.run(from, into);
    s.moveRejected.run({ into, from });
    s.eraseProfile.run(from);
  };

  return {
    read,
    text,
    flush,

    change,
    changeBy,

    /**
     * Writes the log row of the changes held by the transaction under way; every transaction that
     * may change a profile calls it last (writes.ts), so its holds commit with it.
     */
    logged(): void {
      if (entries.length === 0) return;
      s.logProfiles.run(entrySeq, TRANSACTION_ROW, rowText(entries), entryAt);
      entries = [];
    },

    /** True when flush(now) would write a profile. */
    due(now: number): boolean {
      return fresh().due(now);
    },

    /**
     * After a rolled-back transaction, whose holds and writes were undone with it: the next use of
     * the holds reads the log again, and no record parsed before is taken (the transaction may have
     * changed one in place).
     */
    invalidate(): void {
      stale = true;
      entries = [];
      parsed.clear();
    },

    /**
     * Attaches identities to `profile` (already written), in order, merging it into the profile
     * that holds one of them when the merge policy allows (src/model/identities.ts).
     */
    attach(profile: ProfileRecord, identities: IdentityKey[], at: string): Attached {
      const result: Attached = { profile, changed: false, merges: [], notes: [] };
      let dirty = false;
      for (const key of identities) {
        const current = result.profile;
        const holderId = s.identityHolder.get(key.type, key.value) as string | undefined;
        let holder = holderId === undefined ? null : holderId === current.id ? current : read(holderId);
        if (holderId !== undefined && holder === null) {
          // An identity left by a profile that no longer exists: it is free again.
          s.deleteIdentity.run(key.type, key.value);
          holder = null;
        }
        const decision = identityDecision(current, key, holder);
        if (decision.do === 'refuse') {
          result.notes.push(decision.why);
          continue;
        }
        if (decision.do === 'merge' && holder) {
          const survivor = mergeProfiles(holder, current, at);
          moveAll(current.id, holder.id);
          result.merges.push({ merged: current.id, into: holder.id });
          result.notes.push(
            `profile ${current.id} merged into ${holder.id}, which has ${key.type} ${key.value}`,
          );
          result.profile = survivor;
          dirty = true;
          continue;
        }
        if (decision.do === 'attach') {
          s.insertIdentity.run(key.type, key.value, current.id);
          result.notes.push(`${key.type} ${key.value} attached to profile ${current.id}`);
        }
        const next = withIdentity(current, key, at);
        if (next !== current) {
          result.profile = next;
          dirty = true;
        }
      }
      if (dirty) {
        change(result.profile, JSON.stringify(result.profile));
        result.changed = true;
      }
      return result;
    },

    /** Erases a profile (or the survivor an alias names) and everything that names it. */
    erase(id: string): ErasedCounts | null {
      flush('all');
      const target =
        s.profileExists.get(id) === undefined ? (s.aliasTarget.get(id) as string | undefined) : id;
      if (target === undefined || s.profileExists.get(target) === undefined) return null;
      const rejected = s.eraseRejected.run({ id: target }).changes;
      const counts = [
        ...s.eraseSessionEvents.all(target),
        ...s.eraseUnstoredSessionEvents.all(target),
        ...s.eraseProfileEvents.all(target),
      ] as number[];
      const events = counts.reduce((sum, n) => sum + n, 0);
      const sessions = s.eraseSessions.run(target).changes;
      const identities = s.eraseIdentities.run(target).changes;
      const aliases = s.eraseAliases.run(target).changes;
      const profiles = s.eraseProfile.run(target).changes;
      return { profiles, sessions, events, identities, aliases, rejected };
    },
  };
}
