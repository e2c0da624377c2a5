import type { SessionEnrichment } from '../../model/records.js';
import { anonymizeAddress } from './address.js';
import { CountryLookup } from './country.js';
import { UserAgents, type UserAgentInfo } from './user-agent.js';

export interface EnrichmentSettings {
  /** Give new sessions their device, OS, browser and country. */
  enrich: boolean;
  /** Bots: stored and tagged, or answered and dropped. */
  bots: 'tag' | 'drop';
  /** Store client addresses anonymised. */
  anonymize: boolean;
}

/** Countries whose values are kept per User-Agent: past it, a session gets a value of its own. */
const COUNTRIES_SHARED = 64;

/**
 * What the service learns from a request's User-Agent and address (docs/api.md#enrichment): a new
 * session's `device`, `os` and `app`, whether the request comes from a bot, and the address as it
 * may be stored. User-Agents are parsed once and remembered (a bounded cache).
 */
export class Enricher {
  private readonly agents = new UserAgents();
  private readonly countries: CountryLookup | null;
  /** Per parsed User-Agent (gone with it from the parser's bounded cache), per country code. */
  private readonly shared = new WeakMap<UserAgentInfo, Map<string | null, SessionEnrichment>>();

  constructor(readonly settings: EnrichmentSettings) {
    this.countries = settings.enrich ? new CountryLookup() : null;
  }

  /** True when requests with this User-Agent are to be answered and dropped (TRACK_BOTS=drop). */
  drops(userAgent: string | null): boolean {
    return this.settings.bots === 'drop' && this.agents.describe(userAgent).app.bot;
  }

  /** The address as events and the quarantine store it. */
  storedAddress(address: string | null): string | null {
    return this.settings.anonymize ? anonymizeAddress(address) : address;
  }

  /**
   * A new session's `device`, `os` and `app`; null when enrichment is off. Sessions of one
   * User-Agent and country share one frozen value: records are never changed in place, and the
   * sessions the store keeps parsed then hold no copies of it (fewer objects for the collector).
   */
  session(userAgent: string | null, address: string | null): SessionEnrichment | null {
    if (!this.countries) return null;
    const info = this.agents.describe(userAgent);
    const code = this.countries.country(address);
    let byCountry = this.shared.get(info);
    if (!byCountry) this.shared.set(info, (byCountry = new Map()));
    let fields = byCountry.get(code);
    if (!fields) {
      fields = deepFreeze({
        device: { type: info.type, geo: { country: { code } } },
        os: { ...info.os },
        app: { ...info.app },
      });
      if (byCountry.size < COUNTRIES_SHARED) byCountry.set(code, fields);
    }
    return fields;
  }
}

function deepFreeze<T extends object>(value: T): T {
  for (const child of Object.values(value))
    if (typeof child === 'object' && child !== null) deepFreeze(child);
  return Object.freeze(value);
}
