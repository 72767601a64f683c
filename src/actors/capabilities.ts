import { createHash, timingSafeEqual } from 'node:crypto';
import type { Actor } from 'xstate';
import {
  toPublic, type CapabilityRecord, type CapabilityRecords, type CapabilityRefusal, type CapabilitySpec, type MintResponse, type PublicCapability,
} from '../domain/capability.js';
import { errorMessage } from '../domain/errors.js';
import { randomToken } from '../domain/ids.js';
import type { Clock } from '../domain/ports.js';
import { capabilityLogic, verdictOf } from '../machines/capability.js';
import type { ActorFactory } from './inspection.js';

type CapabilityActor = Actor<ReturnType<typeof capabilityLogic>>;

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
 * Capabilities as actors (architecture.md): one capability-machine actor per live token, created with
 * the shared clock and inspection tap; a token that reaches a final state (consumed, expired,
 * revoked) is persisted with that state and its actor is disposed, while the record stays listed for
 * 7 days (the store's window).
 */
export class CapabilityService {
  private readonly actors = new Map<string, CapabilityActor>();
  private readonly logic;
  private seq = 0;

  constructor(private readonly deps: { store: CapabilityRecords; clock: Clock; factory: ActorFactory }) {
    this.logic = capabilityLogic(deps.clock);
  }

  /** Start actors for the stored live records (after a restart). Expired ones die at once. */
  hydrate(): void {
    for (const r of this.deps.store.list(this.deps.clock.now())) if (r.state === 'live') this.spawn(r);
  }

  private spawn(r: CapabilityRecord): CapabilityActor {
    const actor = this.deps.factory.create(this.logic, { tokenId: r.token_id, singleUse: r.single_use, expiresAt: Date.parse(r.expires_at) }, `capability:${r.token_id}`) as CapabilityActor;
    this.actors.set(r.token_id, actor);
    actor.subscribe((snap) => {
      if (snap.status === 'done') this.retire(r.token_id, snap.value as CapabilityRecord['state'], snap.context);
    });
    actor.start();
    return actor;
  }

  /** A final state reached: persist it, dispose the actor. Runs synchronously inside the transition's send. */
  private retire(tokenId: string, state: CapabilityRecord['state'], ctx: { usedAt: number | null; revokedAt: number | null }): void {
    const actor = this.actors.get(tokenId);
    this.actors.delete(tokenId);
    const now = this.deps.clock.now();
    this.pending = this.deps.store.update(tokenId, {
      state, used_at: ctx.usedAt === null ? null : iso(ctx.usedAt), revoked_at: ctx.revokedAt === null ? null : iso(ctx.revokedAt),
    }, now).catch((err) => process.emitWarning(`cannot persist capability ${tokenId}: ${errorMessage(err)}`));
    // Stop after the current transition has finished notifying observers.
    queueMicrotask(() => actor?.stop());
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
    const actor = this.actors.get(rec.token_id);
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
    const actor = this.actors.get(tokenId);
    if (!actor) return false;
    actor.send({ type: 'capability.revoke', at: this.deps.clock.now() });
    await this.pending;
    return true;
  }

  /** DELETE /agents/{id} cascade: revoke every live capability into the workspace; returns the count. */
  async revokeAgent(agentId: string): Promise<number> {
    let n = 0;
    const at = this.deps.clock.now();
    for (const [id, actor] of [...this.actors]) {
      if (this.deps.store.get(id)?.agent_id !== agentId) continue;
      actor.send({ type: 'agent.delete', at });
      n++;
    }
    await this.pending;
    return n;
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

  /** Stop every actor (shutdown): cancels expiry timers; records keep their stored state. */
  stopAll(): void {
    for (const a of this.actors.values()) a.stop();
    this.actors.clear();
  }
}
