import { createHash, timingSafeEqual } from 'node:crypto';
import { fromPromise } from 'xstate';
import { WEBHOOK_TOKEN_RE } from '../domain/events.js';
import { randomToken } from '../domain/ids.js';
import type { AgentRecord, AgentStore } from '../domain/ports.js';
import { lastRequestId, type WebhookAnswer, type WebhookSaveInput } from '../machines/webhookToken.js';
import { ask } from '../actors/ask.js';
import type { AgentDirectory } from '../actors/directory.js';
import type { FeatureActors } from '../actors/tree.js';

/** SHA-256 hex: what the webhook-token machine and the lookup index hold instead of a token. */
export const fingerprint = (token: string): string => createHash('sha256').update(token).digest('hex');

/** behaviour.md §1.2: `wh_` + 43 base64url characters from 32 random bytes. */
export const newWebhookToken = (): string => randomToken('wh_', 32);

/**
 * Webhook tokens of all agents (spec §2 Local webhook, §3 Webhook token). The `webhook:<agent>`
 * actor decides (the §3 table, one request at a time in its own mailbox) and holds the token's
 * fingerprint only, so its snapshot can be inspected. The token values intake compares against are
 * kept here, one entry per agent with its fingerprint index, changed only by the machine's `keep`
 * action, in the step that makes a saved candidate the token; the registry stores them behind
 * (behaviour.md §1.1) and is read once, at start-up. Intake never compares a guess against stored
 * tokens one by one: it looks the guess's SHA-256 up (behaviour.md §9.7).
 */
export class WebhookTokens {
  /** The current token of each agent that has one. */
  private readonly tokens = new Map<string, string>();
  /** Fingerprint of each current token → its agent. */
  private readonly byFingerprint = new Map<string, string>();
  /** Candidates of requests in flight, by fingerprint (the machine is given the fingerprint only). */
  private readonly candidates = new Map<string, { agentId: string; token: string }>();

  constructor(
    records: readonly AgentRecord[],
    private readonly deps: { store: Pick<AgentStore, 'putWebhookToken'>; directory: AgentDirectory; generate?: () => string },
  ) {
    for (const a of records) if (a.webhookToken) this.set(a.id, a.webhookToken);
  }

  private set(agentId: string, token: string): void {
    const old = this.tokens.get(agentId);
    if (old !== undefined) this.byFingerprint.delete(fingerprint(old));
    this.tokens.set(agentId, token);
    this.byFingerprint.set(fingerprint(token), agentId);
  }

  /** What the webhook-token machines run: the registry write of a candidate, and the step that makes it current. */
  readonly actors: NonNullable<FeatureActors['webhook']> = {
    save: fromPromise<void, WebhookSaveInput>(({ input }) => {
      const c = this.candidates.get(input.fingerprint);
      if (!c) return Promise.reject(new Error(`no candidate token for agent ${input.agentId}`));
      return this.deps.store.putWebhookToken(c.agentId, c.token);
    }),
    keep: (agentId, candidate) => {
      const c = this.candidates.get(candidate);
      this.candidates.delete(candidate);
      if (c && c.agentId === agentId) this.set(agentId, c.token);
    },
    drop: (candidate) => { this.candidates.delete(candidate); },
  };

  /** The agent a presented token belongs to, or undefined (unknown, malformed, rotated, deleted). */
  lookup(token: string): string | undefined {
    if (!WEBHOOK_TOKEN_RE.test(token)) return undefined;
    const presented = fingerprint(token);
    const agentId = this.byFingerprint.get(presented);
    const stored = agentId === undefined ? undefined : this.tokens.get(agentId);
    if (stored === undefined) return undefined;
    return timingSafeEqual(Buffer.from(fingerprint(stored), 'hex'), Buffer.from(presented, 'hex')) ? agentId : undefined;
  }

  /** True while `token` is still the current token of `agentId` (not rotated, agent not deleted). */
  stillValid(agentId: string, token: string): boolean {
    return this.lookup(token) === agentId;
  }

  /** The agent's current token, or undefined when it has none (never creates one). */
  current(agentId: string): string | undefined {
    return this.tokens.get(agentId);
  }

  /** spec §3 GET row: the token, created if absent. Rejects when the agent is unknown or the registry write fails. */
  show(agentId: string): Promise<string> {
    return this.ask(agentId, 'webhook.get');
  }

  /** spec §3 POST row: a new token; the old one stops working before this resolves. */
  rotate(agentId: string): Promise<string> {
    return this.ask(agentId, 'webhook.post');
  }

  /** Send one request to the agent's actor with a fresh candidate and wait for its answer. */
  private ask(agentId: string, type: 'webhook.get' | 'webhook.post'): Promise<string> {
    const stored = this.tokens.get(agentId);
    const actor = this.deps.directory.webhook(agentId, stored === undefined ? null : fingerprint(stored));
    if (!actor) return Promise.reject(new Error(`unknown agent ${agentId}`));
    const token = (this.deps.generate ?? newWebhookToken)();
    const candidate = fingerprint(token);
    this.candidates.set(candidate, { agentId, token });
    const answer = ask<typeof actor, string>(actor, { type, fingerprint: candidate }, {
      id: (snap) => lastRequestId(snap.context),
      on: 'webhook.answered',
      answer: (ev, requestId) => {
        const a = ev as WebhookAnswer;
        if (a.requestId !== requestId) return undefined;
        const now = this.tokens.get(agentId);
        if (!a.ok) return a.error instanceof Error ? a.error : new Error(String(a.error));
        return now ?? new Error(`webhook token of ${agentId} has no value`);
      },
      // The agent was deleted before the request was answered.
      ended: () => new Error(`agent ${agentId} was deleted`),
    });
    return answer.finally(() => this.candidates.delete(candidate));
  }

  /** DELETE /agents cascade (spec §4.3 rule 3): the token dies at once (its actor stops with the agent). */
  remove(agentId: string): void {
    const token = this.tokens.get(agentId);
    if (token !== undefined) this.byFingerprint.delete(fingerprint(token));
    this.tokens.delete(agentId);
  }
}
