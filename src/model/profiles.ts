import type { ProfileRecord } from './records.js';

/** Records a new visit on a profile (docs/api.md#profile-and-session). Pure: returns a new record. */
export function applyVisit(profile: ProfileRecord, at: string): ProfileRecord {
  const visits = profile.stats.visits + 1;
  return {
    ...profile,
    metadata: {
      ...profile.metadata,
      time: {
        ...profile.metadata.time,
        update: at,
        visit: { last: profile.metadata.time.visit.current, current: at, count: visits },
      },
    },
    stats: { ...profile.stats, visits },
  };
}

export function newProfile(id: string, at: string): ProfileRecord {
  return {
    id,
    metadata: { time: { insert: at, update: at, visit: { last: null, current: at, count: 1 } } },
    stats: { visits: 1 },
    traits: { public: {}, private: {} },
    consents: {},
    segments: [],
    interests: {},
    ids: [],
    merged: [],
  };
}

/**
 * A stored profile document as a record: documents written before identities existed lack `ids`
 * and `merged`, which start empty. Returns the same object when nothing lacks.
 */
export function profileOf(doc: ProfileRecord): ProfileRecord {
  if (Array.isArray(doc.ids) && Array.isArray(doc.merged)) return doc;
  return {
    ...doc,
    ids: Array.isArray(doc.ids) ? doc.ids : [],
    merged: Array.isArray(doc.merged) ? doc.merged : [],
  };
}
