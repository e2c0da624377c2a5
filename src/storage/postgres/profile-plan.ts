/** The profile a write set leaves, planned before its statement is sent. */
import type { IdentityKey, ProfileRecord, WriteSet } from '../../model/records.js';
import { applyOps, splitChange, withoutEvents } from '../../model/profile-ops.js';
import { applyVisit, newProfile } from '../../model/profiles.js';

export interface ProfilePlan {
  /** The profile as this write set leaves it (created, visited or changed), when it read one. */
  profile: ProfileRecord | null;
  /** True when the write set creates or alters the stored profile. */
  changed: boolean;
  /** The id of the stored profile the write set only requires to exist (a key-share check), if so. */
  guard: string | null;
  /** The identities to attach once the statement has written (profiles.ts). */
  identities: IdentityKey[];
  /**
   * The profile as the write set leaves it when these of its events turn out to be duplicates
   * (their operations not applied); null when their operations changed nothing of it.
   */
  without(duplicates: string[]): ProfileRecord | null;
}

/**
 * A visit and the rules' operations are applied to `current`, the stored profile the caller read
 * under a row lock; without one, the write set is a profile conflict and nothing is sent. The
 * profile is planned as if no event were a duplicate; the caller corrects it with `without` in the
 * rare case one is (the unique index of client ids decides in the statement itself).
 */
export function planProfile(
  ws: WriteSet,
  current: (id: string) => ProfileRecord | null,
): ProfilePlan | { conflict: 'profile' } {
  const p = ws.profile;
  const change = p?.change ?? null;
  const { ops, identities } = splitChange(change);
  let profile: ProfileRecord | null = null;
  let changed = false;
  // The profile before the operations, to plan it again without those of duplicate events.
  let base: ProfileRecord | null = null;
  const guarded = p !== undefined && p.op === 'keep' && ops.length === 0 && identities.length === 0;
  if (p?.op === 'create') {
    profile = p.record;
    changed = true;
  } else if (p && !guarded) {
    const stored = current(p.id);
    if (!stored) return { conflict: 'profile' };
    base = p.op === 'visit' ? applyVisit(stored, p.at) : stored;
    profile = base;
    changed = p.op === 'visit';
    if (ops.length > 0) {
      const result = applyOps(profile, ops, change!.at);
      profile = result.profile;
      changed ||= result.changed;
    }
  }
  const without = (dups: string[]): ProfileRecord | null => {
    if (!change || !p || dups.length === 0) return null;
    const kept = splitChange(withoutEvents(change, dups)).ops;
    if (kept.length === ops.length) return null;
    const start = p.op === 'create' ? newProfile(p.record.id, change.at) : base!;
    return applyOps(start, kept, change.at).profile;
  };
  return { profile, changed, guard: guarded ? p.id : null, identities, without };
}
