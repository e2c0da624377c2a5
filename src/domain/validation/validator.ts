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

  /** The schemas of the events' types, loaded once per type, to check the events in steps. */
  async start(events: EventRecord[]): Promise<ValidationRun> {
    const schemas = new Map<string, CompiledEventType | null>();
    for (const event of events) {
      if (!schemas.has(event.type)) schemas.set(event.type, await this.schemaOf(event.type));
    }
    return new ValidationRun(events, schemas);
  }

  /** Checks every event; throws ValidationFailed listing every failure. Returns the types that had a schema. */
  async check(subject: ValidationSubject): Promise<Set<string>> {
    const run = await this.start(subject.events);
    run.check(subject, () => true);
    return run.finish();
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

/**
 * The checks of one request's events, in steps (docs/api.md#applying-schemas): `event@` and
 * `session@` targets first, `profile@` targets once the profile rules ran. `finish` throws every
 * failure, ordered by event, then by target as saved, whatever step found it.
 */
export class ValidationRun {
  readonly checked = new Set<string>();
  private readonly found: { event: number; target: number; failure: ValidationFailure }[] = [];

  constructor(
    private readonly events: EventRecord[],
    private readonly schemas: Map<string, CompiledEventType | null>,
  ) {}

  /** True when some event's schema has a target of this object. */
  targets(object: TargetObject): boolean {
    for (const compiled of this.schemas.values()) {
      if (compiled?.targets.some((t) => t.object === object)) return true;
    }
    return false;
  }

  /** Checks the targets whose object `include` accepts. */
  check(objects: Omit<ValidationSubject, 'events'>, include: (object: TargetObject) => boolean): void {
    this.events.forEach((event, index) => {
      const compiled = this.schemas.get(event.type);
      if (!compiled) return;
      this.checked.add(event.type);
      const roots: Record<TargetObject, unknown> = {
        event,
        session: objects.session,
        profile: objects.profile,
      };
      compiled.targets.forEach((target, order) => {
        const root = roots[target.object];
        if (root === null || !include(target.object)) return;
        const { found, value } = resolvePath(root, target.path);
        let reason: string | null = null;
        if (!found) reason = `no value at \`${target.path?.join('.') ?? '...'}\``;
        else if (!target.validate(value)) reason = reasonOf(target.validate.errors?.[0]);
        if (reason !== null) {
          this.found.push({
            event: index,
            target: order,
            failure: { event: index, type: event.type, target: target.key, reason },
          });
        }
      });
    });
  }

  /** Throws ValidationFailed when anything failed; else the types that had a schema. */
  finish(): Set<string> {
    if (this.found.length > 0) {
      this.found.sort((a, b) => a.event - b.event || a.target - b.target);
      throw new ValidationFailed(this.found.map((f) => f.failure));
    }
    return this.checked;
  }
}
