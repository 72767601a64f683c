import { isAddressLiteral } from './netAddress.js';

/**
 * `host[:port]` as the egress proxy meets it (behaviour.md §15.2): in `allow` entries, CONNECT targets
 * and absolute URLs. Host names are ASCII (LDH labels, `_` tolerated as resolvers do), at most 253
 * characters; IPv6 literals take brackets when a port follows.
 */

/** The longest host name DNS can carry. */
export const HOST_CHARS_MAX = 253;

const LABEL_RE = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;
const PORT_RE = /^[0-9]{1,5}$/;

/** Lower case and without the root's trailing dot: the form hosts are compared in. */
export function normalizeHost(host: string): string {
  const lower = host.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

/** True for a host name (not an address literal) in normalised form. */
export function isHostName(host: string): boolean {
  return host.length > 0 && host.length <= HOST_CHARS_MAX && host.split('.').every((l) => LABEL_RE.test(l));
}

/** A TCP port 1–65535 written in decimal, or undefined. */
export function parsePort(text: string): number | undefined {
  if (!PORT_RE.test(text)) return undefined;
  const n = Number(text);
  return n >= 1 && n <= 65535 ? n : undefined;
}

/** A host and the text after its port colon, before either is checked. */
export interface HostPortText {
  host: string;
  port?: string;
  /** The host was written in brackets (an IPv6 literal). */
  bracketed: boolean;
}

/**
 * Split `host`, `host:port`, `[v6]`, `[v6]:port` or a bare IPv6 literal (no port). Undefined when
 * brackets are unbalanced or hold something else than an IPv6 literal.
 */
export function splitHostPort(text: string): HostPortText | undefined {
  if (text.startsWith('[')) {
    const m = /^\[([^\]]*)\](?::(.*))?$/.exec(text);
    if (!m || !m[1].includes(':') || !isAddressLiteral(m[1])) return undefined;
    return { host: m[1], port: m[2], bracketed: true };
  }
  const colons = text.split(':').length - 1;
  if (colons > 1) return isAddressLiteral(text) ? { host: text, bracketed: false } : undefined;
  if (colons === 0) return { host: text, bracketed: false };
  const at = text.indexOf(':');
  return { host: text.slice(0, at), port: text.slice(at + 1), bracketed: false };
}

/** A host that a proxy may be asked for: a host name or an address literal, normalised. */
export function checkedHost(host: string): string | undefined {
  const h = normalizeHost(host);
  return isHostName(h) || isAddressLiteral(h) ? h : undefined;
}

/** `host:port` as messages show it, IPv6 in brackets. */
export function formatHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
