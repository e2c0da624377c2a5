/** Destination records from what the management API receives (docs/api.md#destination). */
import { randomBytes, randomUUID } from 'node:crypto';
import type { DestinationRecord, EventSelector } from '../../model/destinations.js';
import type { DestinationInput } from '../../model/payloads.js';
import { InvalidRecord, type FieldProblem } from '../errors.js';

const SECRET_PREFIX = 'whsec_';

/** Headers the service sets itself, which a destination's `headers` may not replace. */
const RESERVED_HEADERS = new Set([
  'content-type',
  'content-length',
  'transfer-encoding',
  'host',
  'connection',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
]);

/** A new signing secret in the Standard Webhooks form: `whsec_` and 32 random bytes in base64. */
export function newSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** The key bytes of a secret. */
export function secretKey(secret: string): Buffer {
  return Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
}

function problems(input: DestinationInput): FieldProblem[] {
  const found: FieldProblem[] = [];
  let url: URL | null = null;
  try {
    url = new URL(input.url);
  } catch {
    // reported below
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
    found.push({ field: ['url'], msg: 'must be an http:// or https:// URL', type: 'value_error.url' });
  }
  for (const name of Object.keys(input.headers ?? {})) {
    if (RESERVED_HEADERS.has(name.toLowerCase())) {
      found.push({ field: ['headers', name], msg: 'is set by the service', type: 'value_error.header' });
    }
  }
  if (input.secret !== undefined) {
    const bytes = secretKey(input.secret).length;
    if (bytes < 24 || bytes > 64) {
      found.push({
        field: ['secret'],
        msg: 'must hold 24 to 64 bytes in base64',
        type: 'value_error.secret',
      });
    }
  }
  return found;
}

/**
 * The stored record for a create-or-replace request: defaults for what is absent; a replaced
 * destination keeps its secret unless a new one is given, a new one gets a generated secret.
 * Throws InvalidRecord (422) naming the field.
 */
export function destinationFromInput(
  input: DestinationInput,
  existing: DestinationRecord | null,
): DestinationRecord {
  const found = problems(input);
  if (found.length > 0) throw new InvalidRecord(found);
  return {
    id: input.id ?? existing?.id ?? randomUUID(),
    name: input.name ?? '',
    url: input.url,
    enabled: input.enabled ?? true,
    event_types: input.event_types ?? [],
    source_ids: input.source_ids ?? [],
    batch_size: input.batch_size ?? 100,
    headers: { ...(input.headers as Record<string, string> | undefined) },
    secret: input.secret ?? existing?.secret ?? newSecret(),
  };
}

export function selectorOf(record: DestinationRecord): EventSelector {
  return { eventTypes: record.event_types, sourceIds: record.source_ids };
}
