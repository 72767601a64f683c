import { LoomError } from './errors.js';

/** behaviour.md §15.2: an agent's network policy. */
export type NetworkPolicy = 'public' | 'none' | 'open' | { allow: string[] };

/** `network` of a POST /agents body, when given (null counts as omitted). */
export function parseNetworkPolicy(raw: unknown): NetworkPolicy | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (raw === 'public' || raw === 'none' || raw === 'open') return raw;
  throw new LoomError(400, 'network must be "public", "none", "open" or {"allow": [hosts]}');
}

/** The short form used in messages. */
export function describeNetworkPolicy(p: NetworkPolicy): string {
  return typeof p === 'string' ? p : `allow ${p.allow.join(', ')}`;
}

/** The CLI's `--network public|none|open|allow=host,host:port` (behaviour.md §15.2). */
export function parseNetworkFlag(text: string): NetworkPolicy {
  if (text === 'public' || text === 'none' || text === 'open') return text;
  if (text.startsWith('allow=')) {
    const allow = text.slice(6).split(',').map((s) => s.trim()).filter(Boolean);
    if (allow.length > 0) return { allow };
  }
  throw new LoomError(400, `invalid --network "${text}" (use public, none, open or allow=host,host:port)`);
}
