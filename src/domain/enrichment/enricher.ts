import type { SessionEnrichment } from '../../model/records.js';
import { anonymizeAddress } from './address.js';
import { CountryLookup } from './country.js';
import { UserAgents } from './user-agent.js';

export interface EnrichmentSettings {
  /** Give new sessions their device, OS, browser and country. */
  enrich: boolean;
  /** Bots: stored and tagged, or answered and dropped. */
  bots: 'tag' | 'drop';
  /** Store client addresses anonymised. */
  anonymize: boolean;
}

/**
 * What the service learns from a request's User-Agent and address (docs/api.md#enrichment): a new
 * session's `device`, `os` and `app`, whether the request comes from a bot, and the address as it
 * may be stored. User-Agents are parsed once and remembered (a bounded cache).
 */
export class Enricher {
  private readonly agents = new UserAgents();
  private readonly countries: CountryLookup | null;

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

  /** A new session's `device`, `os` and `app`; null when enrichment is off. */
  session(userAgent: string | null, address: string | null): SessionEnrichment | null {
    if (!this.countries) return null;
    const { type, os, app } = this.agents.describe(userAgent);
    return {
      device: { type, geo: { country: { code: this.countries.country(address) } } },
      os: { ...os },
      app: { ...app },
    };
  }
}
