import type { SessionRecord } from './records.js';

/**
 * The session as read back: stores keep the time of its latest request (docs/api.md#session) beside
 * the record, so that a request that changes nothing else does not rewrite it; that time is merged
 * into `metadata.time.update` here when it is the later one.
 */
export function withLatestRequest(record: SessionRecord, latest: string | null | undefined): SessionRecord {
  if (!latest || latest <= record.metadata.time.update) return record;
  return { ...record, metadata: { ...record.metadata, time: { ...record.metadata.time, update: latest } } };
}
