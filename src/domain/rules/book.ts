/**
 * Profile rules as the pipeline finds them: cached per event type like validation schemas
 * (docs/api.md#rule-cache), for at most EVENT_VALIDATOR_TTL seconds, the enabled rules of a type in
 * the order they were first saved. A type without rules is cached too, in a bound of its own.
 */
import type { Store } from '../../storage/store.js';
import { TtlCache } from '../ttl-cache.js';
import { compileRule, type CompiledRule } from './compile.js';

/** Most event types (and most types without rules) a process keeps, and their bytes. */
const RULE_CACHE_BOUNDS = { maxEntries: 10_000, maxBytes: 64 * 1024 * 1024 };

export class RuleBook {
  private readonly cache: TtlCache<CompiledRule[]>;

  constructor(store: Store, ttlSec: number) {
    this.cache = new TtlCache<CompiledRule[]>(
      ttlSec * 1000,
      async (eventType) => {
        const rules = (await store.listProfileRules({ eventType })).filter((rule) => rule.enabled);
        return rules.length > 0 ? rules.map(compileRule) : null;
      },
      RULE_CACHE_BOUNDS,
      (rules) => JSON.stringify(rules).length * 2,
    );
  }

  /** The enabled rules of an exact event type, in order; null when it has none. */
  rulesFor(eventType: string): CompiledRule[] | null | Promise<CompiledRule[] | null> {
    const hit = this.cache.peek(eventType);
    return hit ? hit.value : this.cache.get(eventType);
  }

  /** Forgets a type at once: a change made through this process applies here immediately. */
  invalidate(eventType: string): void {
    this.cache.invalidate(eventType);
  }

  /** Forgets every type (changes may have been missed). */
  clear(): void {
    this.cache.clear();
  }
}
