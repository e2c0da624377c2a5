import type { Store } from '../../storage/store.js';
import type { EventRecord, ProfileRecord, SessionRecord, ValidationFailure } from '../../model/records.js';
import { ValidationFailed } from '../errors.js';
import { TtlCache } from '../ttl-cache.js';
import { compileEventType, reasonOf, type CompiledEventType } from './compile.js';
import { resolvePath, type TargetObject } from './targets.js';

export interface ValidationSubject {
  events: EventRecord[];
  /** Null where the request has no session (`/collect`): session@ targets are skipped. */
  session: SessionRecord | null;
  /** Null for profile-less requests: profile@ targets are skipped. */
  profile: ProfileRecord | null;
}

/** Most event types (and most types without a schema) a process keeps, and their bytes. */
const SCHEMA_CACHE_BOUNDS = { maxEntries: 10_000, maxBytes: 64 * 1024 * 1024 };

/**
 * Validation schemas as the tracking endpoints apply them: compiled once when loaded, cached per event
 * type (a missing schema too) for at most EVENT_VALIDATOR_TTL seconds (docs/api.md#schema-cache).
 */
export class EventValidator {
  private readonly cache: TtlCache<CompiledEventType>;

  constructor(store: Store, ttlSec: number) {
    this.cache = new TtlCache<CompiledEventType>(
      ttlSec * 1000,
      async (eventType) => {
        const record = await store.getEventType(eventType);
        return record ? compileEventType(record) : null;
      },
      SCHEMA_CACHE_BOUNDS,
      // Compiled validators take far more memory than their source: a generous estimate.
      (compiled) => JSON.stringify(compiled.record).length * 20,
    );
  }

  /** The enabled compiled schema of an exact event type, or null. */
  async schemaOf(eventType: string): Promise<CompiledEventType | null> {
    const compiled = await this.cache.get(eventType);
    return compiled && compiled.record.validation.enabled ? compiled : null;
  }

  /** Checks every event; throws ValidationFailed listing every failure. Returns the types that had a schema. */
  async check(subject: ValidationSubject): Promise<Set<string>> {
    const schemas = new Map<string, CompiledEventType | null>();
    for (const event of subject.events) {
      if (!schemas.has(event.type)) schemas.set(event.type, await this.schemaOf(event.type));
    }
    const failures: ValidationFailure[] = [];
    const checked = new Set<string>();
    subject.events.forEach((event, index) => {
      const compiled = schemas.get(event.type);
      if (!compiled) return;
      checked.add(event.type);
      const objects: Record<TargetObject, unknown> = {
        event,
        session: subject.session,
        profile: subject.profile,
      };
      for (const target of compiled.targets) {
        const root = objects[target.object];
        if (root === null) continue;
        const { found, value } = resolvePath(root, target.path);
        let reason: string | null = null;
        if (!found) reason = `no value at \`${target.path?.join('.') ?? '...'}\``;
        else if (!target.validate(value)) reason = reasonOf(target.validate.errors?.[0]);
        if (reason !== null) failures.push({ event: index, type: event.type, target: target.key, reason });
      }
    });
    if (failures.length > 0) throw new ValidationFailed(failures);
    return checked;
  }

  /** Forgets a type at once: a change made through this process applies here immediately. */
  invalidate(eventType: string): void {
    this.cache.invalidate(eventType);
  }

  /** Forgets every schema (changes may have been missed). */
  clear(): void {
    this.cache.clear();
  }
}
