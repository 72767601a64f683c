import { HOST_CHARS_MAX, isHostName, normalizeHost, parsePort, splitHostPort } from './hostPort.js';
import { isAddressLiteral, sameAddress } from './netAddress.js';

/** One entry of a `{"allow": [...]}` network policy (behaviour.md §15.2), parsed. */
export interface AllowEntry {
  /** `name`: exactly this host; `suffix`: any host below it (`*.b.org`, not `b.org`); `address`: this literal. */
  kind: 'name' | 'suffix' | 'address';
  /** Normalised: lower case, no brackets, no trailing dot; for `suffix` the part after `*.`. */
  host: string;
  /** The one port it allows; undefined allows any. */
  port?: number;
}

/** Most entries an allow list may hold. */
export const ALLOW_ENTRIES_MAX = 64;
/** Longest entry: a longest host name, a colon and a port. */
const ENTRY_CHARS_MAX = HOST_CHARS_MAX + 6;

/** The entry `text` stands for, or what is wrong with it (a phrase for an error message). */
export function parseAllowEntry(text: string): AllowEntry | string {
  if (text.length === 0) return 'is empty';
  if (text.length > ENTRY_CHARS_MAX) return `is longer than ${ENTRY_CHARS_MAX} characters`;
  const hp = splitHostPort(text);
  if (!hp) return 'is not host, host:port, *.suffix or an address ([v6]:port for IPv6 with a port)';
  let port: number | undefined;
  if (hp.port !== undefined) {
    port = parsePort(hp.port);
    if (port === undefined) return 'has a port outside 1-65535';
  }
  const host = normalizeHost(hp.host);
  if (hp.bracketed || isAddressLiteral(host)) return { kind: 'address', host, port };
  if (host.startsWith('*.')) {
    const suffix = host.slice(2);
    if (!isHostName(suffix) || isAddressLiteral(suffix)) return 'is not *. followed by a host name';
    return { kind: 'suffix', host: suffix, port };
  }
  if (!isHostName(host)) return 'is not a host name, *.suffix or an address';
  return { kind: 'name', host, port };
}

/**
 * Whether an entry allows `host` (normalised, no brackets) on `port`: a name exactly, a suffix for
 * hosts below it only, an address for the same address in any spelling of it (IPv4-mapped included).
 */
export function matchAllowEntry(entry: AllowEntry, host: string, port: number): boolean {
  if (entry.port !== undefined && entry.port !== port) return false;
  switch (entry.kind) {
    case 'address':
      return sameAddress(entry.host, host);
    case 'name':
      return entry.host === host;
    case 'suffix':
      return host.length > entry.host.length + 1 && host.endsWith(`.${entry.host}`);
  }
}
