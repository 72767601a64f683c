import { createHash } from 'node:crypto';
import {
  diedAt, toPublic, type CapabilityRecord, type CapabilityRecords, type CapabilityRefusal, type CapabilitySpec, type MintResponse, type PublicCapability,
} from '../domain/capability.js';
import { errorMessage } from '../domain/errors.js';
import { randomToken } from '../domain/ids.js';
import { DEAD_CAPABILITY_LISTED_MS } from '../domain/limits.js';
import type { Clock } from '../domain/ports.js';
import { capabilityView, verdictOf, type CapabilityContext, type CapabilityInput } from '../machines/capability.js';
import type { AgentDirectory } from '../actors/directory.js';

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

/** The actor input of a stored or minted live record. */
function inputOf(r: CapabilityRecord): CapabilityInput {
  return {
    tokenId: r.token_id, agentId: r.agent_id, pathPrefix: r.path_prefix, verbs: [...r.verbs], ttlMs: r.ttl_ms,
    createdAt: r.created_at, singleUse: r.single_use, expiresAt: Date.parse(r.expires_at),
  };
}

/**
 * Capabilities as actors (architecture.md "One read model"): one capability-machine actor per live
 * token, a `cap:<token_id>` child of its agent (so DELETE /agents revokes them as part of the
 * agent's cascade). A listing reads the live actors' snapshots and, for dead tokens, the archive the
 * machine's `archive` action writes in the very step that reaches consumed, expired or revoked, so
 * it never disagrees with an actor. The record store persists behind them (written after each
 * change, read at start-up only); dead records stay listed for 7 days. The secret itself is never
 * kept: the lookup index holds its SHA-256.
 */
export class CapabilityService {
  private seq = 0;
  /** Dead capabilities within the listing window, by token id. */
  private readonly archive = new Map<string, PublicCapability>();
  /** SHA-256 of each known secret → its token id (live and archived). */
  private readonly byHash = new Map<string, string>();
  /** The order tokens were minted in (listings are oldest first). */
  private readonly order = new Map<string, number>();
  /** The write started by the latest end (awaited by succeed so a consumption is on disk before the 2xx). */
  private pending: Promise<void> = Promise.resolve();

  constructor(private readonly deps: { store: CapabilityRecords; clock: Clock; directory: AgentDirectory }) {}

  /** Read the stored records (start-up): live ones become actors, dead ones the archive. Expired ones die at once. */
  hydrate(): void {
    for (const r of this.deps.store.list(this.deps.clock.now())) {
      this.know(r);
      if (r.state === 'live') this.deps.directory.openCapability(inputOf(r));
      else this.archive.set(r.token_id, toPublic(r));
    }
  }

  private know(r: CapabilityRecord): void {
    this.byHash.set(r.secret_sha256, r.token_id);
    this.order.set(r.token_id, this.seq++);
  }

  /**
   * The capability machine's `archive` action: the token reached a final state. Runs inside that
   * transition: the archive holds it from this step on; the store follows (awaited by a consumption).
   */
  readonly archiveEnd = (snapshot: { value: string; context: CapabilityContext }): void => {
    const view = capabilityView(snapshot);
    this.archive.set(view.token_id, view);
    this.pending = this.deps.store.update(view.token_id, { state: view.state, used_at: view.used_at, revoked_at: view.revoked_at }, this.deps.clock.now())
      .catch((err) => process.emitWarning(`cannot persist capability ${view.token_id}: ${errorMessage(err)}`));
  };

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
    this.know(record);
    this.deps.directory.openCapability(inputOf(record));
    return {
      token_id: record.token_id, secret, agent_id: agentId, path_prefix: record.path_prefix, verbs: record.verbs,
      ttl_ms: record.ttl_ms, single_use: record.single_use, expires_at: record.expires_at,
    };
  }

  /**
   * The token id a presented secret names; undefined when unknown. The index is keyed by the
   * secret's SHA-256, so the lookup's timing says nothing about any stored secret.
   */
  private lookup(secret: string): string | undefined {
    return this.byHash.get(secretHash(secret));
  }

  /**
   * Verify a presented secret (behaviour.md §9.6 step 3). For a single-use token the check and the
   * reservation are one actor transition; the caller must report the outcome on the grant.
   */
  verify(secret: string): Verification {
    const tokenId = this.lookup(secret);
    if (tokenId === undefined) return { ok: false, reason: 'unknown_token' };
    const actor = this.deps.directory.capability(tokenId);
    if (!actor) {
      const dead = this.archive.get(tokenId);
      return { ok: false, reason: dead && dead.state !== 'live' ? dead.state : 'unknown_token' };
    }
    const requestId = `r${++this.seq}`;
    actor.send({ type: 'request.verify', requestId });
    const snap = actor.getSnapshot();
    const verdict = verdictOf(snap, requestId);
    if (!verdict.granted) return { ok: false, reason: verdict.reason };
    const cap = capabilityView(snap);
    let reported = false;
    return {
      ok: true,
      grant: {
        cap,
        succeed: async () => {
          if (reported || !cap.single_use) return;
          reported = true;
          actor.send({ type: 'request.success', requestId, at: this.deps.clock.now() });
          await this.pending;
        },
        fail: () => {
          if (reported || !cap.single_use) return;
          reported = true;
          actor.send({ type: 'request.failure', requestId });
        },
      },
    };
  }

  /** DELETE /capabilities/{token_id}: true when a live token was revoked. */
  async revoke(tokenId: string): Promise<boolean> {
    const actor = this.deps.directory.capability(tokenId);
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

  /** Public records, oldest first, optionally of one agent: the live actors' snapshots and the archive. */
  list(agentId?: string): PublicCapability[] {
    const now = this.deps.clock.now();
    const live = agentId === undefined ? this.deps.directory.allCapabilities() : this.deps.directory.capabilities(agentId);
    const out = live.map((a) => capabilityView(a.getSnapshot()));
    for (const [id, r] of this.archive) {
      const d = diedAt(r);
      if (d !== null && now - d > DEAD_CAPABILITY_LISTED_MS) {
        // Past the window: forgotten here as the store forgets it at its next compaction.
        this.archive.delete(id);
        continue;
      }
      if (agentId === undefined || r.agent_id === agentId) out.push(r);
    }
    const rank = (r: PublicCapability) => this.order.get(r.token_id) ?? Number.MAX_SAFE_INTEGER;
    return out.sort((a, b) => rank(a) - rank(b));
  }

  /** The owner of a token, or undefined when unknown. */
  owner(tokenId: string): string | undefined {
    return this.deps.directory.capability(tokenId)?.getSnapshot().context.agentId ?? this.archive.get(tokenId)?.agent_id;
  }
}
