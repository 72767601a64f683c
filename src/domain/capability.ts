import { LoomError } from './errors.js';
import { CAPABILITY_MAX_TTL_MS } from './limits.js';
import { FS_VERBS, normalisePrefix, type FsVerb } from './fsPath.js';

/** spec §3 Capability states. */
export const CAPABILITY_STATES = ['live', 'consumed', 'expired', 'revoked'] as const;

/** One of the spec §3 Capability states. */
export type CapabilityState = (typeof CAPABILITY_STATES)[number];

/** Why /fs refuses a token with 401 (behaviour.md §9.6 steps 2 and 3). */
export type CapabilityRefusal = 'missing' | 'unknown_token' | 'revoked' | 'expired' | 'consumed';

/** A validated capability spec (spec §2 Capability input fields; behaviour.md §9.5 defaults). */
export interface CapabilitySpec {
  pathPrefix: string;
  verbs: FsVerb[];
  ttlMs: number;
  singleUse: boolean;
}

/**
 * The public record of GET /capabilities (behaviour.md §9.5): never a secret.
 * Timestamps are ISO 8601 UTC with milliseconds (behaviour.md §1.2).
 */
export interface PublicCapability {
  token_id: string;
  agent_id: string;
  path_prefix: string;
  verbs: FsVerb[];
  ttl_ms: number;
  single_use: boolean;
  state: CapabilityState;
  created_at: string;
  expires_at: string;
  used_at: string | null;
  revoked_at: string | null;
}

/** A stored record: the public fields plus the SHA-256 hex of the secret (behaviour.md §1.1). */
export interface CapabilityRecord extends PublicCapability {
  secret_sha256: string;
}

/** The 201 body of POST /capabilities and the `capability` of POST /agents (behaviour.md §9.5). */
export interface MintResponse {
  token_id: string;
  secret: string;
  agent_id: string;
  path_prefix: string;
  verbs: FsVerb[];
  ttl_ms: number;
  single_use: boolean;
  expires_at: string;
}

/** 400 `{"error": "Invalid capability", "message": <reason>}` (behaviour.md §9.5). */
export function invalidCapability(message: string): LoomError {
  return new LoomError(400, 'Invalid capability', { message });
}

/**
 * Validate a capability spec in the order of behaviour.md §9.5 (verbs, ttl_ms, path_prefix,
 * single_use). Verbs are case-insensitive, stored upper-case and de-duplicated; `path_prefix`
 * defaults to `""`, `single_use` to false; `ttl_ms` has no default. Throws `invalidCapability`.
 */
export function parseCapabilitySpec(body: Record<string, unknown>): CapabilitySpec {
  const rawVerbs = body.verbs;
  if (!Array.isArray(rawVerbs) || rawVerbs.length === 0) throw invalidCapability('verbs must be a non-empty array');
  const verbs: FsVerb[] = [];
  for (const v of rawVerbs) {
    const up = typeof v === 'string' ? v.toUpperCase() : undefined;
    if (up === undefined || !(FS_VERBS as readonly string[]).includes(up)) throw invalidCapability(`verb not on the system plane: ${typeof v === 'string' ? v : JSON.stringify(v)}`);
    if (!verbs.includes(up as FsVerb)) verbs.push(up as FsVerb);
  }
  const ttl = body.ttl_ms;
  if (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl < 1 || ttl > CAPABILITY_MAX_TTL_MS) {
    throw invalidCapability(`ttl_ms must be an integer from 1 to ${CAPABILITY_MAX_TTL_MS}`);
  }
  const rawPrefix = body.path_prefix ?? '';
  const pathPrefix = typeof rawPrefix === 'string' ? normalisePrefix(rawPrefix) : null;
  if (pathPrefix === null) throw invalidCapability(`path_prefix can never be legal: ${typeof rawPrefix === 'string' ? rawPrefix : JSON.stringify(rawPrefix)}`);
  const single = body.single_use ?? false;
  if (typeof single !== 'boolean') throw invalidCapability('single_use must be a boolean');
  return { pathPrefix, verbs, ttlMs: ttl, singleUse: single };
}

/** The public view of a stored record. */
export function toPublic(r: CapabilityRecord): PublicCapability {
  return {
    token_id: r.token_id, agent_id: r.agent_id, path_prefix: r.path_prefix, verbs: [...r.verbs], ttl_ms: r.ttl_ms,
    single_use: r.single_use, state: r.state, created_at: r.created_at, expires_at: r.expires_at,
    used_at: r.used_at, revoked_at: r.revoked_at,
  };
}

/** When a dead record died (for the 7-day listing window of behaviour.md §1.8), or null when live. */
export function diedAt(r: PublicCapability): number | null {
  if (r.state === 'consumed') return Date.parse(r.used_at ?? r.expires_at);
  if (r.state === 'revoked') return Date.parse(r.revoked_at ?? r.expires_at);
  if (r.state === 'expired') return Date.parse(r.expires_at);
  return null;
}

/**
 * The capability record port (behaviour.md §1.1 `<data>/capabilities.json`): records with only the
 * SHA-256 of each secret; dead records are listed for 7 days (behaviour.md §1.8).
 */
export interface CapabilityRecords {
  /** Every record (oldest first), dead ones within the 7-day window of `now`. */
  list(now: number): CapabilityRecord[];
  get(tokenId: string): CapabilityRecord | undefined;
  /** The token id whose stored hash equals `hashHex` (the caller confirms in constant time). */
  idForHash(hashHex: string): string | undefined;
  /** Add a new record and persist it. */
  add(record: CapabilityRecord, now: number): Promise<void>;
  /** Change a record's state fields and persist (consumed, expired, revoked). */
  update(tokenId: string, patch: Partial<Pick<CapabilityRecord, 'state' | 'used_at' | 'revoked_at'>>, now: number): Promise<void>;
}
