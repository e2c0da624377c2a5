import { randomUUID } from 'node:crypto';
import { SourceDisabled, UnknownSource } from './errors.js';
import type { Store } from '../storage/store.js';
import type { SourceInput } from '../model/payloads.js';
import type { EventSource } from '../model/records.js';
import { TtlCache } from './ttl-cache.js';

/** The stored record for a create-or-replace request: defaults of docs/api.md#records for what is absent. */
export function sourceFromInput(input: SourceInput): EventSource {
  const record: EventSource = {
    id: input.id ?? randomUUID(),
    type: input.type ?? 'rest',
    name: input.name ?? '',
    description: input.description ?? '',
    enabled: input.enabled ?? true,
    transitional: input.transitional ?? false,
    consent: input.consent ?? false,
    returns_profile: input.returns_profile ?? true,
    tags: input.tags ?? [],
  };
  if (input.rate_limit !== undefined && input.rate_limit !== null) record.rate_limit = input.rate_limit;
  return record;
}

/** Most sources (and most unknown ids) a process keeps, and their bytes (docs/security.md). */
const SOURCE_CACHE_BOUNDS = { maxEntries: 10_000, maxBytes: 16 * 1024 * 1024 };

/** Event sources as the tracking endpoints see them: cached, with the 401s of docs/api.md#source-rules. */
export class SourceCache {
  private readonly cache: TtlCache<EventSource>;

  constructor(store: Store, ttlSec: number) {
    this.cache = new TtlCache<EventSource>(
      ttlSec * 1000,
      (id) => store.getSource(id),
      SOURCE_CACHE_BOUNDS,
      (source) => JSON.stringify(source).length * 2,
    );
  }

  /** The enabled source with this id; UnknownSource or SourceDisabled otherwise (docs/api.md#source-rules). */
  async require(id: string): Promise<EventSource> {
    const source = await this.cache.get(id);
    if (!source) throw new UnknownSource(id);
    if (!source.enabled) throw new SourceDisabled(id);
    return source;
  }

  invalidate(id: string): void {
    this.cache.invalidate(id);
  }

  /** Forgets every source (changes may have been missed). */
  clear(): void {
    this.cache.clear();
  }
}
