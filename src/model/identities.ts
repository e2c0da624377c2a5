/**
 * Identities (docs/api.md#identities): how a value becomes an identity, and what the store decides
 * when one is attached to a profile. Pure: both stores run these rules inside their transactions.
 */
import type { IdentityKey, ProfileRecord } from './records.js';

/** `email`, `user_id`, `phone`, or any other name of lower-case letters and underscores. */
export const IDENTITY_TYPE = /^[a-z_]{1,32}$/;

export const IDENTITY_BOUNDS = {
  /** Characters of a normalised value; longer values are ignored. */
  maxValueLength: 255,
  /** Identities one profile holds; past it no more are attached. */
  maxPerProfile: 100,
  /** Distinct identities one request attaches; the rest are ignored. */
  maxPerRequest: 10,
} as const;

/** Values that say "nobody" rather than naming someone. */
const BLOCKED = new Set(['', 'null', 'undefined', 'anonymous', '0', '-1']);

/**
 * The normalised value of an identity, or null when the value names nobody: strings and finite
 * numbers are trimmed (emails lower-cased); blocked values, empty strings, other types, values
 * longer than the bound and values with control characters are ignored.
 */
export function normalizeIdentity(type: string, raw: unknown): string | null {
  let value: string;
  if (typeof raw === 'string') value = raw.trim();
  else if (typeof raw === 'number' && Number.isFinite(raw)) value = String(raw);
  else return null;
  if (type === 'email') value = value.toLowerCase();
  if (BLOCKED.has(value.toLowerCase()) || value.length > IDENTITY_BOUNDS.maxValueLength) return null;
  // Control characters (U+0000 included) never belong to an email, a user id or a phone number.
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return null;
  }
  return value;
}

/** `type:value` of a query such as `GET /profiles?identity=email:ana@example.com`, or null. */
export function parseIdentityQuery(text: string): IdentityKey | null | 'blocked' {
  const colon = text.indexOf(':');
  if (colon < 1) return null;
  const type = text.slice(0, colon);
  if (!IDENTITY_TYPE.test(type)) return null;
  const value = normalizeIdentity(type, text.slice(colon + 1));
  return value === null ? 'blocked' : { type, value };
}

export const sameIdentity = (a: IdentityKey, b: IdentityKey) => a.type === b.type && a.value === b.value;

const userIds = (profile: ProfileRecord) => profile.ids.filter((id) => id.type === 'user_id');

/**
 * What to do with an identity being attached to `profile`, given the profile that holds it now
 * (null when none does):
 * - `attach` it to the profile; `held` when the profile holds it already;
 * - `merge` the profile into the holder, the survivor (the one that held it first);
 * - `refuse`, with the reason for `debugging.logs`: a profile holds at most one `user_id`, and two
 *   profiles that each hold a different `user_id` never merge.
 */
export function identityDecision(
  profile: ProfileRecord,
  key: IdentityKey,
  holder: ProfileRecord | null,
): { do: 'held' | 'attach' | 'merge' } | { do: 'refuse'; why: string } {
  const shown = `${key.type} ${key.value}`;
  if (holder?.id === profile.id) return { do: 'held' };
  if (!holder) {
    const own = userIds(profile).filter((id) => !sameIdentity(id, key));
    if (key.type === 'user_id' && own.length > 0) {
      return {
        do: 'refuse',
        why: `${shown} not attached: profile ${profile.id} already has user_id ${own[0]!.value}`,
      };
    }
    if (profile.ids.length >= IDENTITY_BOUNDS.maxPerProfile) {
      return {
        do: 'refuse',
        why: `${shown} not attached: profile ${profile.id} holds ${IDENTITY_BOUNDS.maxPerProfile} identities`,
      };
    }
    return { do: 'attach' };
  }
  const mine = userIds(profile);
  const theirs = userIds(holder);
  if (mine.length > 0 && theirs.length > 0) {
    return {
      do: 'refuse',
      why: `${shown} not attached: it belongs to profile ${holder.id}, and the two profiles hold different user_ids (${theirs[0]!.value}, ${mine[0]!.value}), so they are not merged`,
    };
  }
  return { do: 'merge' };
}

/** The profile with one more identity (the store calls it once the identity is its own). */
export function withIdentity(profile: ProfileRecord, key: IdentityKey, at: string): ProfileRecord {
  if (profile.ids.some((id) => sameIdentity(id, key))) return profile;
  const time = { ...profile.metadata.time, update: at };
  return { ...profile, ids: [...profile.ids, key], metadata: { ...profile.metadata, time } };
}
