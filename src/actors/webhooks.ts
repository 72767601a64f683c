import { createHash, timingSafeEqual } from 'node:crypto';
import type { Actor } from 'xstate';
import { WEBHOOK_TOKEN_RE } from '../domain/events.js';
import { randomToken } from '../domain/ids.js';
import type { AgentStore } from '../domain/ports.js';
import { webhookTokenMachine } from '../machines/webhookToken.js';
import type { ActorFactory } from './inspection.js';

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

/** behaviour.md §1.2: `wh_` + 43 base64url characters from 32 random bytes. */
export const newWebhookToken = (): string => randomToken('wh_', 32);

/**
 * Webhook tokens of all agents (spec §2 Local webhook, §3 Webhook token): one webhook-token actor
 * per agent, the token persisted in the agent registry (behaviour.md §1.1), and a lookup map keyed
 * by the token's SHA-256 so that intake never compares a guess against stored tokens one by one
 * (behaviour.md §9.7 "constant-time lookup by SHA-256").
 */
export class WebhookTokens {
  private readonly actors = new Map<string, Actor<typeof webhookTokenMachine>>();
  private readonly byHash = new Map<string, string>();

  constructor(private readonly agents: AgentStore, private readonly factory: ActorFactory, private readonly generate = newWebhookToken) {
    for (const a of agents.list()) if (a.webhookToken) this.byHash.set(sha256(a.webhookToken), a.id);
  }

  /** The agent a presented token belongs to, or undefined (unknown, malformed, rotated, deleted). */
  lookup(token: string): string | undefined {
    if (!WEBHOOK_TOKEN_RE.test(token)) return undefined;
    const agentId = this.byHash.get(sha256(token));
    const stored = agentId === undefined ? undefined : this.agents.get(agentId)?.webhookToken;
    if (stored === undefined || stored.length !== token.length) return undefined;
    return timingSafeEqual(Buffer.from(stored), Buffer.from(token)) ? agentId : undefined;
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

  /**
   * Deliver one event to the agent's actor. Everything up to the registry write is synchronous,
   * so concurrent calls see each other's tokens and the lookup map never lags the actor.
   */
  private async send(agentId: string, type: 'webhook.get' | 'webhook.post'): Promise<string> {
    const rec = this.agents.get(agentId);
    if (!rec) throw new Error(`unknown agent ${agentId}`);
    const actor = this.actor(agentId, rec.webhookToken ?? null);
    const before = actor.getSnapshot().context.token;
    actor.send({ type, token: this.generate() });
    const after = actor.getSnapshot().context.token as string;
    if (after !== before) {
      if (before) this.byHash.delete(sha256(before));
      this.byHash.set(sha256(after), agentId);
      await this.agents.put({ ...rec, webhookToken: after });
    }
    return after;
  }

  private actor(agentId: string, stored: string | null): Actor<typeof webhookTokenMachine> {
    let a = this.actors.get(agentId);
    if (!a) {
      a = this.factory.create(webhookTokenMachine, { token: stored }, `webhook:${agentId}`);
      a.start();
      this.actors.set(agentId, a);
    }
    return a;
  }

  /** DELETE /agents cascade (spec §4.3 rule 3): the token dies at once. */
  remove(agentId: string): void {
    const token = this.agents.get(agentId)?.webhookToken;
    if (token) this.byHash.delete(sha256(token));
    for (const [h, id] of this.byHash) if (id === agentId) this.byHash.delete(h);
    this.actors.get(agentId)?.stop();
    this.actors.delete(agentId);
  }
}
