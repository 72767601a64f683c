import { randomBytes, timingSafeEqual } from 'node:crypto';

/** Longest Proxy-Authorization value looked at: an agent id and a secret fit many times over. */
const HEADER_CHARS_MAX = 1024;
const BASIC_RE = /^basic +([A-Za-z0-9+/]+={0,2}) *$/i;

/**
 * The egress proxy's per-agent credentials (behaviour.md §15.2): a random secret for each agent,
 * made on first use and kept for the proxy's lifetime, held in memory only. A request proves its
 * agent with `Proxy-Authorization: Basic base64(agentId:secret)`; one agent's secret never opens
 * another's name, and any agent id (`__proto__` too) is only a key of a Map.
 */
export class ProxyCredentials {
  private readonly secrets = new Map<string, Buffer>();

  /** The agent's secret (URL-safe text). */
  secret(agentId: string): string {
    let s = this.secrets.get(agentId);
    if (!s) {
      s = Buffer.from(randomBytes(24).toString('base64url'));
      this.secrets.set(agentId, s);
    }
    return s.toString();
  }

  /** The agent a `Proxy-Authorization` value proves, or undefined when it proves none. */
  verify(header: string | undefined): string | undefined {
    if (typeof header !== 'string' || header.length > HEADER_CHARS_MAX) return undefined;
    const m = BASIC_RE.exec(header);
    if (!m) return undefined;
    const pair = Buffer.from(m[1], 'base64').toString('utf8');
    const colon = pair.indexOf(':');
    if (colon <= 0) return undefined;
    const agentId = pair.slice(0, colon);
    const expected = this.secrets.get(agentId);
    const given = Buffer.from(pair.slice(colon + 1));
    if (!expected || given.length !== expected.length) return undefined;
    return timingSafeEqual(given, expected) ? agentId : undefined;
  }
}
