import ipaddr from 'ipaddr.js';

/**
 * IP address literals and their classification for the egress proxy (behaviour.md §15.2). The ranges
 * are ipaddr.js's (a well-kept table of the IANA special-purpose registries), not a table of ours.
 */

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** The metadata services of the big clouds: link-local or ULA already, named so a refusal says what it is. */
const METADATA = ['169.254.169.254', 'fd00:ec2::254'].map((a) => ipaddr.parse(a));

/** The NAT64 well-known prefix (RFC 6052): its addresses stand for the IPv4 address in their last 32 bits. */
const NAT64 = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

/** What a refused range is called in a denial reason (`private address 10.0.0.5`). */
const RANGE_WORDS: Record<string, string> = {
  loopback: 'loopback',
  private: 'private',
  uniqueLocal: 'private',
  linkLocal: 'link-local',
  carrierGradeNat: 'CGNAT',
  multicast: 'multicast',
  unspecified: 'unspecified',
  broadcast: 'broadcast',
};

/**
 * A literal address in the forms a host may take: dotted-quad IPv4 with four decimal parts, or IPv6
 * without brackets and without a zone. Shorthands such as `127.1` or `0x7f.1` are not literals here:
 * as host names they go through the resolver, and its answer is what gets checked.
 */
export function parseAddress(text: string): Address | undefined {
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text);
  if (!text.includes(':') || text.includes('%') || !ipaddr.IPv6.isValid(text)) return undefined;
  return ipaddr.IPv6.parse(text);
}

/** True when `text` is a literal address (see parseAddress). */
export function isAddressLiteral(text: string): boolean {
  return parseAddress(text) !== undefined;
}

/** An IPv4-mapped IPv6 address as the IPv4 address it stands for; others unchanged. */
function unmapped(a: Address): Address {
  return a.kind() === 'ipv6' && (a as ipaddr.IPv6).isIPv4MappedAddress() ? (a as ipaddr.IPv6).toIPv4Address() : a;
}

/** True when two literals name the same address (an IPv4 address equals its IPv4-mapped form). */
export function sameAddress(a: string, b: string): boolean {
  const x = parseAddress(a);
  const y = parseAddress(b);
  if (!x || !y) return false;
  return unmapped(x).toNormalizedString() === unmapped(y).toNormalizedString();
}

function isMetadata(a: Address): boolean {
  return METADATA.some((m) => m.kind() === a.kind() && m.toNormalizedString() === a.toNormalizedString());
}

/** The refused class of an unmapped address, or null for public unicast. */
function refusedClass(a: Address): string | null {
  if (isMetadata(a)) return 'metadata';
  const range = a.range();
  if (range === 'unicast') return null;
  if (a.kind() === 'ipv6' && a.match(NAT64)) {
    const bytes = a.toByteArray().slice(12);
    return refusedClass(ipaddr.fromByteArray(bytes));
  }
  return RANGE_WORDS[range] ?? 'reserved';
}

/**
 * Why `public` refuses to connect to this address (`private address 10.0.0.5`, `metadata address
 * 169.254.169.254`), or null when it is public unicast. IPv4-mapped and NAT64 forms are judged by the
 * IPv4 address they carry; anything that is not a literal is refused.
 */
export function publicRefusal(text: string): string | null {
  const a = parseAddress(text);
  if (!a) return `not an address ${text}`;
  const refused = refusedClass(unmapped(a));
  return refused === null ? null : `${refused} address ${text}`;
}

/** True for a cloud metadata address, in any of its forms. */
export function isMetadataAddress(text: string): boolean {
  const a = parseAddress(text);
  return a !== undefined && refusedClass(unmapped(a)) === 'metadata';
}

/** True for an address that always means this machine: loopback or unspecified (which connects to it). */
export function isLoopbackOrUnspecified(text: string): boolean {
  const a = parseAddress(text);
  if (!a) return false;
  const range = unmapped(a).range();
  return range === 'loopback' || range === 'unspecified';
}
