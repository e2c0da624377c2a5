/**
 * The batch-write engine of the PostgreSQL store: group commit of many requests' write sets in one
 * transaction, written by one statement per chunk (or, after a failure, each in a savepoint), sent
 * pipelined on one connection.
 * One file because the batch, its chunks and the retries share one transaction's state.
 */
import type pg from 'pg';
import type { CommitResult, Committed, IdentityKey, ProfileRecord, WriteSet } from '../../model/records.js';
import { splitChange, withoutEvents } from '../../model/profile-ops.js';
import { profileOf } from '../../model/profiles.js';
import { attachIdentities } from './profiles.js';
import type { ItemOutcome } from '../group-commit.js';
import { causeOf, isConnectionLost, isRetryable, isUnavailable, translate } from './errors.js';
import { docOf, SQL, storable, type DocRow } from './statements.js';
import { planProfile, type ProfilePlan } from './profile-plan.js';
import { writeChunk as writeMany, type ChunkEntry } from './write-chunk.js';
import { planWriteSet, type WritePlan } from './write-set.js';
import { recordsTouch } from './rows.js';

/** Attempts of a write set that lost a deadlock or serialization race before its error is reported. */
const RETRIES = 3;

export class BatchWrites {
  constructor(
    private readonly transaction: <T>(fn: (client: pg.PoolClient) => Promise<T>) => Promise<T>,
    /**
     * `fn` on a connection outside a transaction (each statement commits on its own); `discard`
     * marks the connection as broken by an error `fn` handles itself.
     */
    private readonly unwrapped: <T>(
      fn: (client: pg.PoolClient, discard: (error: unknown) => void) => Promise<T>,
    ) => Promise<T>,
  ) {}

  /**
   * Writes a batch in one transaction, each write set in its own savepoint, so that a conflict or an
   * error undoes that write set alone. The profiles the batch visits are locked first, in id order,
   * so that batches of several processes cannot deadlock on them. A write set that loses a deadlock
   * or serialization race on something else is retried alone after the batch; when the batch
   * transaction itself fails for a reason other than an unreachable database, every write set is
   * retried alone so that one bad write set cannot fail the others.
   */
  async writeBatch(items: WriteSet[]): Promise<ItemOutcome<CommitResult>[]> {
    let outcomes: (ItemOutcome<CommitResult> | undefined)[];
    try {
      outcomes = (await this.firstTry(items)).map((o) => (o.ok || !isRetryable(o.error) ? o : undefined));
    } catch (error) {
      if (isUnavailable(error) && !isRetryable(causeOf(error))) throw error;
      outcomes = items.map(() => undefined);
    }
    for (let i = 0; i < items.length; i++) outcomes[i] ??= await this.writeAlone(items[i]!);
    return outcomes.map((o) => (o!.ok ? o! : { ok: false, error: translate(o!.error) }));
  }

  /** One write set in a transaction of its own, tried again after a deadlock or serialization failure. */
  private async writeAlone(ws: WriteSet): Promise<ItemOutcome<CommitResult>> {
    for (let attempt = 1; ; attempt++) {
      let outcome: ItemOutcome<CommitResult>;
      try {
        outcome = (await this.batchTransaction([ws], true))[0]!;
      } catch (error) {
        outcome = { ok: false, error };
      }
      if (outcome.ok || attempt >= RETRIES || !isRetryable(causeOf(outcome.error))) return outcome;
    }
  }

  /**
   * The batch without a savepoint per write set: a savepoint costs the server a subtransaction
   * (more than 64 in one transaction slow down every snapshot of the database), and a write set's
   * statement fails only in rare cases (a conflict writes nothing and fails nothing). When one
   * does, the whole transaction is rolled back and the batch written again, a savepoint each.
   */
  private async firstTry(items: WriteSet[]): Promise<ItemOutcome<CommitResult>[]> {
    if (oneStatement(items)) {
      let done: { outcomes: ItemOutcome<CommitResult>[]; end: number } | undefined;
      try {
        done = await this.statementAlone(items);
      } catch (error) {
        // The statement failed and wrote nothing (it is its own transaction): the usual way below
        // finds which write set failed. Anything else (the connection lost) is handled as before.
        if (!(error instanceof WriteSetFailed)) throw error;
      }
      if (done) {
        // A chunk ends before a session or profile written twice: the rest is a batch of its own,
        // written after the chunk committed (so it sees the chunk's writes, as in one transaction).
        if (done.end === items.length) return done.outcomes;
        return [...done.outcomes.slice(0, done.end), ...(await this.firstTry(items.slice(done.end)))];
      }
    }
    if (items.length === 1) return this.batchTransaction(items, true);
    try {
      return await this.batchTransaction(items, false);
    } catch (error) {
      if (!(error instanceof WriteSetFailed)) throw error;
      return this.batchTransaction(items, true);
    }
  }

  /**
   * A batch that oneStatement accepts, its first chunk written by its one statement on a connection
   * outside a transaction: the statement commits on its own, so the chunk costs one round trip
   * instead of three (BEGIN, the statement, COMMIT), with the same durability
   * (docs/architecture.md#the-write-path). `end`: the first write set not written.
   */
  private statementAlone(items: WriteSet[]): Promise<{ outcomes: ItemOutcome<CommitResult>[]; end: number }> {
    return this.unwrapped(async (client, discard) => {
      const outcomes: ItemOutcome<CommitResult>[] = new Array(items.length);
      const end = await this.writeChunk(client, items, 0, new Map(), outcomes, false);
      // A write set whose touching events all proved duplicates stored nothing: its touch is a
      // statement of its own after the chunk (committed), and if that fails, so does that write set
      // alone (writeBatch tries it again when it may).
      const left = touchesLeft(items.slice(0, end), outcomes);
      try {
        await this.touchSessions(
          client,
          left.map((i) => items[i]!),
        );
      } catch (error) {
        if (isConnectionLost(error)) discard(error);
        for (const i of left) outcomes[i] = { ok: false, error };
      }
      return { outcomes, end };
    });
  }

  private batchTransaction(items: WriteSet[], isolated: boolean): Promise<ItemOutcome<CommitResult>[]> {
    return this.transaction(async (client) => {
      const profiles = await this.lockProfiles(client, items);
      // Answered in the round trip of the first write: when it fails, so do the writes after it.
      const touched = this.touchSessions(client, items.filter(touchUnrecorded));
      touched.catch(() => undefined);
      const outcomes: ItemOutcome<CommitResult>[] = new Array(items.length);
      let next = 0;
      try {
        while (next < items.length) {
          next = hasIdentities(items[next]!)
            ? await this.writeWithIdentities(client, items, next, profiles, outcomes)
            : await this.writeChunk(client, items, next, profiles, outcomes, isolated);
        }
      } catch (error) {
        await touched; // a failed touch is the cause: its error (a deadlock is retried)
        throw error;
      }
      await touched;
      await this.touchSessions(
        client,
        touchesLeft(items, outcomes).map((i) => items[i]!),
      );
      return outcomes;
    });
  }

  /**
   * Locks the stored profiles that the batch changes (visits, rules' operations, identities), in id
   * order, and returns their documents. When the batch attaches identities, the profiles holding
   * them now are locked too, FOR UPDATE, since a merge deletes one of them.
   */
  private async lockProfiles(client: pg.PoolClient, items: WriteSet[]): Promise<Map<string, ProfileRecord>> {
    const ids = new Set<string>();
    const keys: IdentityKey[] = [];
    for (const ws of items) {
      const p = ws.profile;
      if (!p) continue;
      const { ops, identities } = splitChange(p.change ?? null);
      if (p.op !== 'create' && (p.op === 'visit' || ops.length > 0 || identities.length > 0)) ids.add(p.id);
      keys.push(...identities);
    }
    if (keys.length > 0) {
      const { rows } = await client.query<{ profile_id: string }>({
        ...SQL.identityHolders,
        values: [keys.map((k) => storable(k.type)), keys.map((k) => storable(k.value))],
      });
      for (const row of rows) ids.add(row.profile_id);
    }
    const profiles = new Map<string, ProfileRecord>();
    if (ids.size === 0) return profiles;
    const statement = keys.length > 0 ? SQL.lockProfilesForMerge : SQL.lockProfiles;
    const { rows } = await client.query<DocRow & { id: string }>({
      ...statement,
      values: [[...ids].map(storable)],
    });
    for (const row of rows) profiles.set(row.id, profileOf(docOf<ProfileRecord>(row)!));
    return profiles;
  }

  /**
   * Gives the sessions these write sets use without rewriting them the time of their latest
   * request, after locking them in id order: the write sets whose events do not say it
   * (touchUnrecorded), before their writes, and those whose events that said it all proved
   * duplicates (touchesLeft), after. Outside the write sets' savepoints: a write set that fails
   * afterwards still leaves its session's time moved, which only says that a request came.
   */
  private async touchSessions(client: pg.PoolClient, items: WriteSet[]): Promise<void> {
    const latest = new Map<string, string>();
    for (const ws of items) {
      if (!ws.touch) continue;
      const known = latest.get(ws.touch.id);
      if (known === undefined || known < ws.touch.at) latest.set(ws.touch.id, ws.touch.at);
    }
    if (latest.size === 0) return;
    const ids = [...latest.keys()].map(storable);
    await client.query({ ...SQL.touchSessions, values: [ids, [...latest.values()]] });
  }

  /**
   * Writes the write sets from `start` on, sending them all at once (the connection pipelines them:
   * one round trip for the lot). In a batch without savepoints, the write sets are written by one
   * statement for the chunk (write-chunk.ts), except replays, which keep a statement each
   * (write-set.ts); in an isolated batch, each write set has its statement between SAVEPOINT and
   * RELEASE. The chunk stops before a write set whose profile or session an earlier one of the
   * chunk writes, since it must see that write set's outcome, and before one that attaches
   * identities (written alone). When an isolated statement fails, the server ignores what follows
   * until ROLLBACK TO SAVEPOINT: that write set gets the error and the ones after it are sent again.
   * `profiles` holds the current documents of the locked profiles and takes the changes of each
   * write set kept. Returns the index of the first write set not done.
   */
  private async writeChunk(
    client: pg.PoolClient,
    items: WriteSet[],
    start: number,
    profiles: Map<string, ProfileRecord>,
    outcomes: ItemOutcome<CommitResult>[],
    isolated: boolean,
  ): Promise<number> {
    const touched = new Set<string>();
    const sessions = new Set<string>();
    const batched: (ChunkEntry & { index: number })[] = [];
    const planned: { index: number; plan: Planned }[] = [];
    let end = start;
    for (; end < items.length; end++) {
      const ws = items[end]!;
      if (end > start && hasIdentities(ws)) break;
      const profileId = ws.profile?.op === 'create' ? ws.profile.record.id : ws.profile?.id;
      if (profileId !== undefined) {
        if (touched.has(profileId)) break;
        touched.add(profileId);
      }
      // Two writes of one session in one statement would not see each other.
      const sessionId = ws.session?.record.id;
      if (sessionId !== undefined) {
        if (sessions.has(sessionId)) break;
        sessions.add(sessionId);
      }
      const current = (id: string) => profiles.get(id) ?? null;
      if (!isolated && ws.replayOf === undefined) {
        const plan = planProfile(ws, current);
        if ('conflict' in plan) outcomes[end] = { ok: true, value: { ok: false, conflict: plan.conflict } };
        else batched.push({ index: end, ws, plan });
        continue;
      }
      const plan = planWriteSet(ws, current);
      if ('conflict' in plan) outcomes[end] = { ok: true, value: { ok: false, conflict: plan.conflict } };
      else planned.push({ index: end, plan });
    }
    // Sent first, in the same round trip as the statements of the write sets written one by one.
    const chunk = batched.length > 0 ? writeMany(client, batched) : Promise.resolve([]);
    chunk.catch(() => undefined);
    const write = (statement: Planned['statement']) =>
      client.query<WriteAnswer>({ ...statement, values: statement.values.map(storable) });
    const sent = planned.map(({ plan: { statement } }) =>
      isolated
        ? Promise.allSettled([
            client.query('SAVEPOINT write_set'),
            write(statement),
            client.query('RELEASE SAVEPOINT write_set'),
          ])
        : Promise.allSettled([write(statement)]),
    );
    const [written, results] = await Promise.all([Promise.allSettled([chunk]), Promise.all(sent)]);
    if (!isolated) {
      const failed = [...written, ...results.flat()].find(rejected);
      if (failed) throw isConnectionLost(failed.reason) ? failed.reason : new WriteSetFailed(failed.reason);
    }
    const chunkOutcomes = written[0]!.status === 'fulfilled' ? written[0]!.value : [];
    for (let k = 0; k < batched.length; k++) {
      const { index, plan } = batched[k]!;
      const outcome = chunkOutcomes[k]!;
      if ('conflict' in outcome) {
        outcomes[index] = { ok: true, value: { ok: false, conflict: outcome.conflict } };
        continue;
      }
      const value = this.kept(plan, outcome.duplicates, profiles);
      outcomes[index] = { ok: true, value: await this.correct(client, plan, value, profiles) };
    }
    for (let k = 0; k < planned.length; k++) {
      const { index, plan } = planned[k]!;
      const steps = results[k]!;
      const savepoint = steps[0]!;
      const write = steps[isolated ? 1 : 0]!;
      const failed = steps.find((step) => step.status === 'rejected') as PromiseRejectedResult | undefined;
      if (failed) {
        const error: unknown = failed.reason;
        // Without the savepoint or the connection, the transaction cannot go on: the batch fails.
        if (savepoint.status === 'rejected' || isConnectionLost(error)) throw error;
        await client.query('ROLLBACK TO SAVEPOINT write_set');
        outcomes[index] = { ok: false, error };
        return index + 1;
      }
      const answer = write.status === 'fulfilled' ? write.value.rows[0] : undefined;
      const value = this.committed(answer, plan, profiles);
      outcomes[index] = {
        ok: true,
        value: value.ok ? await this.correct(client, plan, value, profiles) : value,
      };
    }
    return end;
  }

  /** What a written statement means: a conflict, or the write set committed with its profile. */
  private committed(answer: WriteAnswer | undefined, plan: Planned, profiles: Map<string, ProfileRecord>) {
    if (answer?.replayed === false) return { ok: false as const, conflict: 'rejected' as const };
    if (answer?.profile_ok === false) return { ok: false as const, conflict: 'profile' as const };
    if (answer?.written !== true) return { ok: false as const, conflict: 'session' as const };
    return this.kept(plan, plan.keyed ? (answer.duplicates ?? []) : [], profiles);
  }

  /** A write set written, with the profile it leaves and the ids of its events that were duplicates. */
  private kept(plan: ProfilePlan, duplicates: string[], profiles: Map<string, ProfileRecord>): Committed {
    if (plan.profile) profiles.set(plan.profile.id, plan.profile);
    return {
      ok: true,
      profile: plan.profile,
      profileChanged: plan.changed,
      merges: [],
      notes: [],
      duplicates,
    };
  }

  /**
   * When some events were duplicates whose operations the statement applied to the profile (it was
   * planned without knowing), writes the profile again without them, still under the batch's lock.
   */
  private async correct(
    client: pg.PoolClient,
    plan: ProfilePlan,
    committed: Committed,
    profiles: Map<string, ProfileRecord>,
  ): Promise<Committed> {
    const corrected = plan.without(committed.duplicates);
    if (!corrected) return committed;
    await client.query({
      ...SQL.updateProfile,
      values: [corrected.id, JSON.stringify(corrected)].map(storable),
    });
    profiles.set(corrected.id, corrected);
    return { ...committed, profile: corrected };
  }

  /**
   * One write set that attaches identities: its statement, then the identities one by one (each
   * may merge its profile into another), all in one savepoint. A conflict or an error undoes it alone.
   */
  private async writeWithIdentities(
    client: pg.PoolClient,
    items: WriteSet[],
    index: number,
    profiles: Map<string, ProfileRecord>,
    outcomes: ItemOutcome<CommitResult>[],
  ): Promise<number> {
    const ws = items[index]!;
    const plan = planWriteSet(ws, (id) => profiles.get(id) ?? null);
    if ('conflict' in plan) {
      outcomes[index] = { ok: true, value: { ok: false, conflict: plan.conflict } };
      return index + 1;
    }
    await client.query('SAVEPOINT write_set');
    try {
      const { statement } = plan;
      const answer = (
        await client.query<WriteAnswer>({ ...statement, values: statement.values.map(storable) })
      ).rows[0];
      const written = this.committed(answer, plan, new Map());
      if (!written.ok) {
        await client.query('ROLLBACK TO SAVEPOINT write_set');
        outcomes[index] = { ok: true, value: written };
        return index + 1;
      }
      const committed = await this.correct(client, plan, written, new Map());
      // Duplicate events run no rule: their identities are not attached either.
      const change = ws.profile!.change!;
      const identities = committed.duplicates.length
        ? splitChange(withoutEvents(change, committed.duplicates)).identities
        : plan.identities;
      const attached = await attachIdentities(client, committed.profile!, identities, change.at);
      await client.query('RELEASE SAVEPOINT write_set');
      for (const id of attached.gone) profiles.delete(id);
      profiles.set(attached.profile.id, attached.profile);
      const { profile, merges, notes } = attached;
      const profileChanged = plan.changed || attached.changed;
      const { duplicates } = committed;
      outcomes[index] = { ok: true, value: { ok: true, profile, profileChanged, merges, notes, duplicates } };
    } catch (error) {
      if (isConnectionLost(error)) throw error;
      await client.query('ROLLBACK TO SAVEPOINT write_set');
      outcomes[index] = { ok: false, error };
    }
    return index + 1;
  }
}

type Planned = Extract<WritePlan, { statement: unknown }>;

const rejected = (step: PromiseSettledResult<unknown>): step is PromiseRejectedResult =>
  step.status === 'rejected';

/** A write set's statement failed in a batch written without savepoints: the batch is written again. */
class WriteSetFailed extends Error {
  constructor(readonly reason: unknown) {
    super('a write set failed in a batch without savepoints', { cause: reason });
  }
}

interface WriteAnswer {
  written: boolean;
  profile_ok: boolean;
  /** When the write set replays a quarantined record: whether it was there to claim. */
  replayed?: boolean;
  /** When the write set's events carry client ids: those not stored (duplicates). */
  duplicates?: string[];
}

/**
 * True when the batch needs nothing before its chunk (writeChunk): no profile to lock and read
 * first (only new profiles without operations, which a duplicate event could take back, and stored
 * ones the write set only requires to exist), no session to touch but by its events (recordsTouch),
 * no replay, no identity.
 */
function oneStatement(items: WriteSet[]): boolean {
  return items.every((ws) => {
    if (touchUnrecorded(ws) || ws.replayOf !== undefined) return false;
    const p = ws.profile;
    if (!p) return true;
    if (p.op === 'visit') return false;
    // A new profile, or a stored one only required to exist: no operation to apply to either.
    return !(p.change?.steps.some((step) => step.ops.length > 0) ?? false);
  });
}

/** A write set that touches its session and has no event to say so (rows.ts: recordsTouch). */
function touchUnrecorded(ws: WriteSet): boolean {
  return ws.touch !== undefined && !ws.events.some((e) => recordsTouch(ws, e));
}

/**
 * The indexes of the write sets written whose events that said when their session's request came
 * all proved duplicates (not stored again): their touch is still to write.
 */
function touchesLeft(items: WriteSet[], outcomes: ItemOutcome<CommitResult>[]): number[] {
  const left: number[] = [];
  items.forEach((ws, i) => {
    const outcome = outcomes[i];
    if (!ws.touch || !outcome?.ok || !outcome.value.ok || outcome.value.duplicates.length === 0) return;
    const duplicates = new Set(outcome.value.duplicates);
    const recording = ws.events.filter((e) => recordsTouch(ws, e));
    if (recording.length > 0 && recording.every((e) => duplicates.has(e.id))) left.push(i);
  });
  return left;
}

function hasIdentities(ws: WriteSet): boolean {
  return ws.profile?.change?.steps.some((step) => step.ops.some((op) => op.op === 'identify')) ?? false;
}
