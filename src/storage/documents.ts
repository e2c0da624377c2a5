/** Stored documents are JSON text; these read it back into records. */
import type { EventRecord } from '../model/records.js';

/** The record in a JSON text, or null when there is none (no row). */
export function parseDoc<T>(text: unknown): T | null {
  return typeof text === 'string' ? (JSON.parse(text) as T) : null;
}

/** The records of a list of JSON texts. */
export function parseDocs<T>(texts: unknown[]): T[] {
  return texts.map((text) => JSON.parse(text as string) as T);
}

/**
 * An event as the stores answer it: events stored before client ids and event times existed get
 * `metadata.time.create` = `insert`, `source` "server" and `client_id` null (docs/api.md#event).
 */
export function eventOf(event: EventRecord): EventRecord {
  const { metadata } = event;
  if (metadata.client_id === undefined) metadata.client_id = null;
  if (metadata.time.create === undefined) {
    metadata.time.create = metadata.time.insert;
    metadata.time.source = 'server';
  }
  return event;
}
