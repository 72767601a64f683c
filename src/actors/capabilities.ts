import { createHash, timingSafeEqual } from 'node:crypto';
import {
  toPublic, type CapabilityRecord, type CapabilityRecords, type CapabilityRefusal, type CapabilitySpec, type MintResponse, type PublicCapability,
} from '../domain/capability.js';
import { errorMessage } from '../domain/errors.js';
import { randomToken } from '../domain/ids.js';
import type { Clock } from '../domain/ports.js';
import { verdictOf, type CapabilityInput } from '../machines/capability.js';
import type { CapabilityRef } from './tree.js';

/** Where capability actors live: `cap:<token_id>` children of their agent in the actor tree. */
export interface CapabilityTree {
  /** Spawn the actor of a live capability under its agent; undefined when the agent is unknown. */
  spawn(agentId: string, input: CapabilityInput): CapabilityRef | undefined;
  /** The actor of a live capability, or undefined. */
  get(tokenId: string): CapabilityRef | undefined;
}

/** SHA-256 hex of a presented or minted secret (behaviour.md §1.1: only hashes are stored). */
export function secretHash(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** A verified request's hold on a capability: report the outcome exactly once. */
export interface Grant {
  readonly cap: PublicCapability;
  /** The request succeeded (2xx): a single-use token is consumed, persisted before this resolves. */
  succeed(): Promise<void>;
  /** The request failed: a single-use reservation is released. */
  fail(): void;
}

export type Verification = { ok: true; grant: Grant } | { ok: false; reason: CapabilityRefusal };

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * Capabilities as actors (architecture.md): one capability-machine actor per live token, a
 * `cap:<token_id>` child of its agent in the actor tree (so DELETE /agents revokes them as part of
 * the agent's cascade); a token that reaches a final state (consumed, expired, revoked) is persisted
 * with that state and leaves the tree, while the record stays listed for 7 days (the store's
 * window). The secret itself is never kept: records hold its SHA-256 only.
 */
export class CapabilityService {
  private seq = 0;

  constructor(private readonly deps: { store: CapabilityRecords; clock: Clock; tree: CapabilityTree }) {}

  /** Start actors for the stored live records (after a restart). Expired ones die at once. */
  hydrate(): void {
    for (const r of this.deps.store.list(this.deps.clock.now())) if (r.state === 'live') this.spawn(r);
  }

  private spawn(r: CapabilityRecord): void {
    const actor = this.deps.tree.spawn(r.agent_id, { tokenId: r.token_id, singleUse: r.single_use, expiresAt: Date.parse(r.expires_at) });
    actor?.subscribe((snap) => {
      if (snap.status === 'done') this.retire(r.token_id, snap.value as CapabilityRecord['state'], snap.context);
    });
  }

  /** A final state reached: persist it (its agent then stops the actor). Runs synchronously inside the transition's send. */
  private retire(tokenId: string, state: CapabilityRecord['state'], ctx: { usedAt: number | null; revokedAt: number | null }): void {
    const now = this.deps.clock.now();
    this.pending = this.deps.store.update(tokenId, {
      state, used_at: ctx.usedAt === null ? null : iso(ctx.usedAt), revoked_at: ctx.revokedAt === null ? null : iso(ctx.revokedAt),
    }, now).catch((err) => process.emitWarning(`cannot persist capability ${tokenId}: ${errorMessage(err)}`));
  }

  /** The write started by the latest retire (awaited by succeed so consumption is on disk before the 2xx). */
  private pending: Promise<void> = Promise.resolve();

  /** Mint (spec §3 row "(none) → live"): the secret is returned here once and never stored. */
  async mint(agentId: string, spec: CapabilitySpec): Promise<MintResponse> {
    const now = this.deps.clock.now();
    const secret = randomToken('caps_', 32);
    const record: CapabilityRecord = {
      token_id: randomToken('cap_', 12), agent_id: agentId, path_prefix: spec.pathPrefix, verbs: spec.verbs, ttl_ms: spec.ttlMs,
      single_use: spec.singleUse, state: 'live', created_at: iso(now), expires_at: iso(now + spec.ttlMs), used_at: null, revoked_at: null,
      secret_sha256: secretHash(secret),
    };
    await this.deps.store.add(record, now);
    this.spawn(record);
    return {
      token_id: record.token_id, secret, agent_id: agentId, path_prefix: record.path_prefix, verbs: record.verbs,
      ttl_ms: record.ttl_ms, single_use: record.single_use, expires_at: record.expires_at,
    };
  }

  /** The record a presented secret names, compared in constant time; undefined when unknown. */
  private lookup(secret: string): CapabilityRecord | undefined {
    const hash = secretHash(secret);
    const id = this.deps.store.idForHash(hash);
    const rec = id === undefined ? undefined : this.deps.store.get(id);
    if (!rec) return undefined;
    const ok = timingSafeEqual(Buffer.from(rec.secret_sha256, 'hex'), Buffer.from(hash, 'hex'));
    return ok ? rec : undefined;
  }

  /**
   * Verify a presented secret (behaviour.md §9.6 step 3). For a single-use token the check and the
   * reservation are one actor transition; the caller must report the outcome on the grant.
   */
  verify(secret: string): Verification {
    const rec = this.lookup(secret);
    if (!rec) return { ok: false, reason: 'unknown_token' };
    const actor = this.deps.tree.get(rec.token_id);
    if (!actor) return { ok: false, reason: rec.state === 'live' ? 'revoked' : rec.state };
    const requestId = `r${++this.seq}`;
    actor.send({ type: 'request.verify', requestId });
    const verdict = verdictOf(actor.getSnapshot(), requestId);
    if (!verdict.granted) return { ok: false, reason: verdict.reason };
    let reported = false;
    const cap = toPublic(rec);
    return {
      ok: true,
      grant: {
        cap,
        succeed: async () => {
          if (reported || !rec.single_use) return;
          reported = true;
          actor.send({ type: 'request.success', requestId, at: this.deps.clock.now() });
          await this.pending;
        },
        fail: () => {
          if (reported || !rec.single_use) return;
          reported = true;
          actor.send({ type: 'request.failure', requestId });
        },
      },
    };
  }

  /** DELETE /capabilities/{token_id}: true when a live token was revoked. */
  async revoke(tokenId: string): Promise<boolean> {
    const actor = this.deps.tree.get(tokenId);
    if (!actor) return false;
    actor.send({ type: 'capability.revoke', at: this.deps.clock.now() });
    await this.pending;
    return true;
  }

  /**
   * DELETE /agents/{id}: the agent's actor has revoked its live capabilities (the tree's cascade);
   * resolves when those final states are on disk.
   */
  settled(): Promise<void> {
    return this.pending;
  }

  /** Public records, oldest first, optionally of one agent; live state read from the actors. */
  list(agentId?: string): PublicCapability[] {
    return this.deps.store.list(this.deps.clock.now())
      .filter((r) => agentId === undefined || r.agent_id === agentId)
      .map(toPublic);
  }

  /** The owner of a token, or undefined when unknown. */
  owner(tokenId: string): string | undefined {
    return this.deps.store.get(tokenId)?.agent_id;
  }
}
