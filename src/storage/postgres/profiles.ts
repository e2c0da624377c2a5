/**
 * Identities, merges and erasure of the PostgreSQL store, inside a transaction: identities are
 * attached by the unique key (type, value), so that two processes attaching the same identity at the
 * same moment take turns on it and the second one merges into the first (src/model/identities.ts,
 * profile-merge.ts). Profiles taking part in a merge are locked FOR UPDATE.
 */
import type pg from 'pg';
import { identityDecision, withIdentity } from '../../model/identities.js';
import { mergeProfiles } from '../../model/profile-merge.js';
import { profileOf } from '../../model/profiles.js';
import type { IdentityKey, MergeOutcome, ProfileRecord } from '../../model/records.js';
import type { ErasedCounts } from '../store.js';
import { docOf, SQL, storable, type DocRow, type Statement } from './statements.js';

type Client = pg.PoolClient;

async function run<R extends pg.QueryResultRow>(client: Client, statement: Statement, values: unknown[]) {
  return client.query<R>({ ...statement, values: values.map(storable) });
}

/** The profile with this id, locked FOR UPDATE; null when it does not exist (any more). */
async function lockProfile(client: Client, id: string): Promise<ProfileRecord | null> {
  const doc = docOf<ProfileRecord>((await run<DocRow>(client, SQL.lockProfile, [id])).rows[0]);
  return doc && profileOf(doc);
}

async function holderOf(client: Client, key: IdentityKey): Promise<string | null> {
  return (
    (await run<{ profile_id: string }>(client, SQL.identityHolder, [key.type, key.value])).rows[0]
      ?.profile_id ?? null
  );
}

const profileText = (id: string) => `"profile":{"id":${JSON.stringify(id)}}`;

export interface Attached {
  profile: ProfileRecord;
  changed: boolean;
  merges: MergeOutcome[];
  notes: string[];
  /** Profiles merged away (deleted), for the caller's view of the locked profiles. */
  gone: string[];
}

/**
 * Attaches identities to `profile` (already written in this transaction), in order, merging it into
 * the profile that holds one of them when the merge policy allows.
 */
export async function attachIdentities(
  client: Client,
  profile: ProfileRecord,
  identities: IdentityKey[],
  at: string,
): Promise<Attached> {
  const result: Attached = { profile, changed: false, merges: [], notes: [], gone: [] };
  let dirty = false;
  for (const key of identities) {
    // A few turns at most: a holder may be merged away, or an identity taken, while we look.
    for (let turn = 0; turn < 5; turn++) {
      const current = result.profile;
      const holderId = await holderOf(client, key);
      let holder: ProfileRecord | null = null;
      if (holderId !== null && holderId !== current.id) {
        holder = await lockProfile(client, holderId);
        // Merged into another, or erased, before we locked it: look again.
        if (holder === null || (await holderOf(client, key)) !== holderId) {
          if (holder === null && (await holderOf(client, key)) === holderId) {
            await run(client, SQL.deleteIdentity, [key.type, key.value]);
          }
          continue;
        }
      } else if (holderId === current.id) holder = current;
      const decision = identityDecision(current, key, holder);
      if (decision.do === 'refuse') {
        result.notes.push(decision.why);
        break;
      }
      if (decision.do === 'merge' && holder) {
        const survivor = mergeProfiles(holder, current, at);
        await run(client, SQL.mergeProfile, [
          holder.id,
          current.id,
          profileText(holder.id),
          profileText(current.id),
        ]);
        result.merges.push({ merged: current.id, into: holder.id });
        result.notes.push(
          `profile ${current.id} merged into ${holder.id}, which has ${key.type} ${key.value}`,
        );
        result.gone.push(current.id);
        result.profile = survivor;
        dirty = true;
        break;
      }
      if (decision.do === 'attach') {
        const inserted = await run(client, SQL.insertIdentity, [key.type, key.value, current.id]);
        // Taken by another transaction meanwhile (it waited for it to commit): decide again.
        if ((inserted.rowCount ?? 0) === 0) continue;
        result.notes.push(`${key.type} ${key.value} attached to profile ${current.id}`);
      }
      const next = withIdentity(current, key, at);
      if (next !== current) {
        result.profile = next;
        dirty = true;
      }
      break;
    }
  }
  if (dirty) {
    await run(client, SQL.updateProfile, [result.profile.id, JSON.stringify(result.profile)]);
    result.changed = true;
  }
  return result;
}

/** Erases a profile (or the survivor an alias names) and everything that names it, in a transaction. */
export async function eraseProfile(client: Client, id: string): Promise<ErasedCounts | null> {
  let target: string | null = (await lockProfile(client, id))?.id ?? null;
  if (target === null) {
    const alias = (await run<{ profile_id: string }>(client, SQL.aliasTarget, [id])).rows[0]?.profile_id;
    if (alias !== undefined) target = (await lockProfile(client, alias))?.id ?? null;
  }
  if (target === null) return null;
  const count = async (statement: Statement) => (await run(client, statement, [target])).rowCount ?? 0;
  const rejected = await count(SQL.eraseRejected);
  const deleted = async (statement: Statement) =>
    (await run<{ n: number }>(client, statement, [target])).rows[0]?.n ?? 0;
  const events = (await deleted(SQL.eraseSessionEvents)) + (await deleted(SQL.eraseProfileEvents));
  const sessions = await count(SQL.eraseSessions);
  const identities = await count(SQL.eraseIdentities);
  const aliases = await count(SQL.eraseAliases);
  const profiles = await count(SQL.eraseProfile);
  return { profiles, sessions, events, identities, aliases, rejected };
}
