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
