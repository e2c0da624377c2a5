import { performance } from 'node:perf_hooks';
import type { EventContexts, EventRecord } from '../../model/records.js';
import type { RequestClock } from '../event-time.js';
import type { Identity } from '../identity.js';
import { deepMerge } from '../../model/merge.js';
import type { Trace } from '../trace.js';
import type { TrackRequest } from './request.js';

/** What the event records of a request are built from, besides the payload and the identity. */
export interface EventStamp {
  /** The insert time of the request's events. */
  now: string;
  /** When each event happened (docs/api.md#event-time). */
  clock: RequestClock;
  /** The client address as it is stored. */
  ip: string | null;
  saveEvents: boolean;
  newId: () => string;
}

/**
 * The event records of a request as they would be stored (docs/api.md#profile-and-session: each
 * event's context is the request's context merged with its own), which of them are saved, and the
 * parts their contexts were merged from, which the store may keep apart (docs/api.md#context-storage).
 */
export function buildEvents(
  request: TrackRequest,
  identity: Identity,
  stamp: EventStamp,
  trace: Trace,
): { records: EventRecord[]; saved: EventRecord[]; contexts: EventContexts } {
  const { payload, profileLess } = request;
  const topContext = payload.context ?? {};
  const records: EventRecord[] = [];
  const saved: EventRecord[] = [];
  const contexts: EventContexts = { request: topContext, own: new Map() };
  for (const input of payload.events) {
    const started = trace.enabled ? performance.now() : 0;
    const { create, source } = stamp.clock.eventTime(input.timestamp);
    const record: EventRecord = {
      id: stamp.newId(),
      type: input.type,
      properties: input.properties ?? {},
      context: input.context ? deepMerge(topContext, input.context).value : topContext,
      source: { id: payload.source.id },
      session: { id: identity.session.id },
      profile: identity.profileId !== null ? { id: identity.profileId } : null,
      metadata: {
        time: { insert: stamp.now, create, source },
        client_id: input.id ?? null,
        ip: stamp.ip,
        status: 'collected',
        profile_less: profileLess,
      },
    };
    records.push(record);
    if (input.context) contexts.own.set(record.id, input.context);
    const skipped = !stamp.saveEvents
      ? 'options.saveEvents is false'
      : input.options?.save === false
        ? 'options.save is false'
        : undefined;
    if (!skipped) saved.push(record);
    if (trace.enabled) {
      trace.event(
        { id: record.id, type: record.type, saved: false, skipped, validation: 'no schema' },
        started,
      );
    }
  }
  return { records, saved, contexts };
}
