/**
 * A request's context kept once for its events (docs/api.md#context-storage,
 * docs/architecture.md#the-write-path). Each event's context is the request's context deep-merged
 * with the event's own; stored in every event, a large request context sent with many events would
 * be stored once per event (1,000 times for one request). A write set whose events would repeat
 * more than a few KB of context keeps it once (SQLite: on the run; PostgreSQL: a row of
 * `event_contexts`) and each event with only its own context; reads merge them again. Everything
 * else, old rows included, is stored and read as it is.
 */
import { deepMerge } from '../model/merge.js';
import type { EventRecord, JsonObject, WriteSet } from '../model/records.js';

/** Characters of context a write set's events may repeat before the context is kept once. */
export const REPEATED_CONTEXT_LIMIT = 4096;

/** A write set's request context kept once: its JSON text, and the events as stored beside it. */
export interface SharedContext {
  text: string;
  /** The write set's events, in order, each with only the context it brought itself (or `{}`). */
  events: EventRecord[];
}

/**
 * The write set's context to keep once, or null when its events are stored as they are: a single
 * event, an empty request context, or one whose copies would add up to REPEATED_CONTEXT_LIMIT
 * characters at most.
 */
export function shareContext(ws: WriteSet): SharedContext | null {
  const contexts = ws.contexts;
  if (!contexts || ws.events.length < 2) return null;
  const text = JSON.stringify(contexts.request);
  if (text.length <= 2 || text.length * (ws.events.length - 1) <= REPEATED_CONTEXT_LIMIT) return null;
  const events = ws.events.map((e) => ({ ...e, context: contexts.own.get(e.id) ?? {} }));
  return { text, events };
}

/**
 * Events stored beside a shared context, with their context as it was merged when they were built:
 * the shared one, or it merged with their own. Events of one context share its objects (a page of
 * a thousand such events holds the context once in memory). Changes the events in place.
 */
export function mergeContext<T extends EventRecord>(events: T[], context: JsonObject): T[] {
  for (const e of events) e.context = deepMerge(context, e.context).value;
  return events;
}
