import ipaddr from 'ipaddr.js';

/** The address as ipaddr.js reads it, an IPv4-mapped IPv6 address as its IPv4 address; null if none. */
function parsed(address: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  let value: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    value = ipaddr.parse(address);
  } catch {
    return null;
  }
  return value.kind() === 'ipv6' && (value as ipaddr.IPv6).isIPv4MappedAddress()
    ? (value as ipaddr.IPv6).toIPv4Address()
    : value;
}

/**
 * The address to look up in the country database: a public (unicast) address, IPv4-mapped IPv6
 * addresses as IPv4; null for private, loopback, link-local and other special ranges.
 */
export function publicAddress(address: string | null): string | null {
  if (address === null) return null;
  const ip = parsed(address);
  return ip !== null && ip.range() === 'unicast' ? ip.toString() : null;
}

/**
 * The address with its last IPv4 octet, or its last 80 IPv6 bits, zeroed (docs/api.md#client-address).
 * An IPv4-mapped IPv6 address keeps its form with the IPv4 part anonymised; something that is not an
 * address becomes null.
 */
export function anonymizeAddress(address: string | null): string | null {
  if (address === null) return null;
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(address);
  } catch {
    return null;
  }
  if (ip.kind() === 'ipv4') {
    const bytes = ip.toByteArray();
    bytes[3] = 0;
    return ipaddr.fromByteArray(bytes).toString();
  }
  const v6 = ip as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) {
    const bytes = v6.toIPv4Address().toByteArray();
    return `::ffff:${bytes.slice(0, 3).join('.')}.0`;
  }
  const bytes = v6.toByteArray();
  for (let i = 6; i < 16; i++) bytes[i] = 0;
  return ipaddr.fromByteArray(bytes).toString();
}
