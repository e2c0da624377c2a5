/** Stored documents are JSON text; these read it back into records. */

/** The record in a JSON text, or null when there is none (no row). */
export function parseDoc<T>(text: unknown): T | null {
  return typeof text === 'string' ? (JSON.parse(text) as T) : null;
}

/** The records of a list of JSON texts. */
export function parseDocs<T>(texts: unknown[]): T[] {
  return texts.map((text) => JSON.parse(text as string) as T);
}
