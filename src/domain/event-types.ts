import type { EventTypeInput } from '../model/payloads.js';
import type { EventTypeRecord } from '../model/records.js';

/** The stored record for an add-or-replace request (docs/api.md#event-type): saving replaces the whole record. */
export function eventTypeFromInput(input: EventTypeInput): EventTypeRecord {
  return {
    event_type: input.event_type,
    name: input.name ?? input.event_type,
    description: input.description ?? '',
    tags: input.tags ?? [],
    validation: {
      enabled: input.validation?.enabled ?? true,
      json_schema: input.validation?.json_schema ?? {},
    },
  };
}
