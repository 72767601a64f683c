import { createHash, timingSafeEqual } from 'node:crypto';
import { WEBHOOK_TOKEN_RE } from '../domain/events.js';
import { randomToken } from '../domain/ids.js';
import type { AgentStore } from '../domain/ports.js';
import type { WebhookRef } from './tree.js';

/** SHA-256 hex: what the webhook-token machine and the lookup index hold instead of a token. */
export const fingerprint = (token: string): string => createHash('sha256').update(token).digest('hex');

/** behaviour.md §1.2: `wh_` + 43 base64url characters from 32 random bytes. */
export const newWebhookToken = (): string => randomToken('wh_', 32);

/** Where webhook-token actors live: the `webhook:<agent>` child of each agent in the actor tree. */
export interface WebhookTree {
  /** The agent's actor, spawned with the stored token's fingerprint on first use; undefined for an unknown agent. */
  webhook(agentId: string, storedFingerprint: string | null): WebhookRef | undefined;
}

/**
 * Webhook tokens of all agents (spec §2 Local webhook, §3 Webhook token). The token's value lives
 * in one place, the agent registry (behaviour.md §1.1); the `webhook:<agent>` actor holds the
 * state of the §3 table and the token's fingerprint only, so its snapshot can be inspected; the
 * lookup index maps fingerprints to agents, so intake never compares a guess against stored tokens
 * one by one (behaviour.md §9.7 "constant-time lookup by SHA-256").
 */
export class WebhookTokens {
  private readonly byFingerprint = new Map<string, string>();

  constructor(private readonly agents: AgentStore, private readonly tree: WebhookTree, private readonly generate = newWebhookToken) {
    for (const a of agents.list()) if (a.webhookToken) this.byFingerprint.set(fingerprint(a.webhookToken), a.id);
  }

  /** The agent a presented token belongs to, or undefined (unknown, malformed, rotated, deleted). */
  lookup(token: string): string | undefined {
    if (!WEBHOOK_TOKEN_RE.test(token)) return undefined;
    const presented = fingerprint(token);
    const agentId = this.byFingerprint.get(presented);
    const stored = agentId === undefined ? undefined : this.agents.get(agentId)?.webhookToken;
    if (stored === undefined) return undefined;
    return timingSafeEqual(Buffer.from(fingerprint(stored), 'hex'), Buffer.from(presented, 'hex')) ? agentId : undefined;
  }

  /** True while `token` is still the current token of `agentId` (not rotated, agent not deleted). */
  stillValid(agentId: string, token: string): boolean {
    return this.lookup(token) === agentId;
  }

  /** spec §3 GET row: the token, created if absent. Throws when the agent is unknown. */
  show(agentId: string): Promise<string> {
    return this.send(agentId, 'webhook.get');
  }

  /** spec §3 POST row: a new token; the old one stops working before this returns. */
  rotate(agentId: string): Promise<string> {
    return this.send(agentId, 'webhook.post');
  }

  /** One change at a time per agent: each waits for the previous one's registry write. */
  private readonly queues = new Map<string, Promise<unknown>>();

  private send(agentId: string, type: 'webhook.get' | 'webhook.post'): Promise<string> {
    const prev = this.queues.get(agentId) ?? Promise.resolve();
    const next = prev.catch(() => undefined).then(() => this.apply(agentId, type));
    const tail = next.catch(() => undefined);
    this.queues.set(agentId, tail);
    void tail.then(() => { if (this.queues.get(agentId) === tail) this.queues.delete(agentId); });
    return next;
  }

  /**
   * Deliver one event to the agent's actor with a candidate token's fingerprint; when the machine
   * takes the candidate, the registry stores it and the index follows once it is on disk.
   */
  private async apply(agentId: string, type: 'webhook.get' | 'webhook.post'): Promise<string> {
    const rec = this.agents.get(agentId);
    const stored = rec?.webhookToken ?? null;
    const actor = rec ? this.tree.webhook(agentId, stored === null ? null : fingerprint(stored)) : undefined;
    if (!rec || !actor) throw new Error(`unknown agent ${agentId}`);
    const candidate = this.generate();
    actor.send({ type, fingerprint: fingerprint(candidate) });
    if (actor.getSnapshot().context.fingerprint !== fingerprint(candidate)) {
      if (stored === null) throw new Error(`webhook token of ${agentId} has no value`);
      return stored;
    }
    await this.agents.put({ ...rec, webhookToken: candidate });
    if (stored !== null) this.byFingerprint.delete(fingerprint(stored));
    this.byFingerprint.set(fingerprint(candidate), agentId);
    return candidate;
  }

  /** DELETE /agents cascade (spec §4.3 rule 3): the token dies at once (its actor stops with the agent). */
  remove(agentId: string): void {
    for (const [h, id] of this.byFingerprint) if (id === agentId) this.byFingerprint.delete(h);
  }
}
