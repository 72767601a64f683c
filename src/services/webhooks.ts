import { createHash, timingSafeEqual } from 'node:crypto';
import { fromPromise } from 'xstate';
import { WEBHOOK_TOKEN_RE } from '../domain/events.js';
import { randomToken } from '../domain/ids.js';
import type { AgentRecord, AgentStore } from '../domain/ports.js';
import { lastRequestId, type SealedToken, type WebhookAnswer, type WebhookChanged, type WebhookSaveInput } from '../machines/webhookToken.js';
import { ask } from '../actors/ask.js';
import type { AgentDirectory } from '../actors/directory.js';
import type { FeatureActors, WebhookActor } from '../actors/tree.js';

/** SHA-256 hex: what the webhook-token machine and the lookup index hold instead of a token. */
export const fingerprint = (token: string): string => createHash('sha256').update(token).digest('hex');

/** behaviour.md §1.2: `wh_` + 43 base64url characters from 32 random bytes. */
export const newWebhookToken = (): string => randomToken('wh_', 32);

/** A token as the inspector may show it: its prefix and four characters (never enough to use). */
export const maskedToken = (token: string): string => `${token.slice(0, 7)}…`;

/** A candidate token sealed for its trip through the webhook-token actor (machines/webhookToken.ts). */
class Sealed implements SealedToken {
  readonly #value: string;
  readonly fingerprint: string;
  readonly masked: string;

  constructor(value: string) {
    this.#value = value;
    this.fingerprint = fingerprint(value);
    this.masked = maskedToken(value);
  }

  reveal(): string {
    return this.#value;
  }

  toJSON(): string {
    return this.masked;
  }
}

/**
 * Webhook tokens of all agents (spec §2 Local webhook, §3 Webhook token). The `webhook:<agent>`
 * actor is the one writer of an agent's token: it decides (the §3 table, one request at a time in
 * its own mailbox), holds the token as a fingerprint and a masked form, and has the registry store
 * the value (behaviour.md §1.1), which is the value's only copy. What this service keeps is the
 * intake index — fingerprint → agent — built from the registry at start-up and then fed only by the
 * actors' `webhook.changed` events, in the step that makes a saved candidate the token. Intake never
 * compares a guess against stored tokens one by one: it looks the guess's SHA-256 up (behaviour.md §9.7).
 */
export class WebhookTokens {
  /** Fingerprint of each current token → its agent. */
  private readonly byFingerprint = new Map<string, string>();
  /** Agent → the fingerprint of its current token (to unindex it when the agent goes). */
  private readonly ofAgent = new Map<string, string>();
  /** The actors whose changes this index follows. */
  private readonly followed = new WeakSet<WebhookActor>();

  constructor(
    records: readonly AgentRecord[],
    private readonly deps: { store: Pick<AgentStore, 'putWebhookToken' | 'webhookToken'>; directory: AgentDirectory; generate?: () => string },
  ) {
    for (const a of records) if (a.webhookToken) this.index(a.id, fingerprint(a.webhookToken));
  }

  private index(agentId: string, fp: string | null): void {
    const old = this.ofAgent.get(agentId);
    if (old !== undefined && this.byFingerprint.get(old) === agentId) this.byFingerprint.delete(old);
    this.ofAgent.delete(agentId);
    if (fp === null) return;
    this.ofAgent.set(agentId, fp);
    this.byFingerprint.set(fp, agentId);
  }

  /** What the webhook-token machines run: the registry write of a candidate. */
  readonly actors: NonNullable<FeatureActors['webhook']> = {
    save: fromPromise<void, WebhookSaveInput>(({ input }) => {
      if (!input.candidate || input.candidate.fingerprint !== input.fingerprint) return Promise.reject(new Error(`no candidate token for agent ${input.agentId}`));
      return this.deps.store.putWebhookToken(input.agentId, input.candidate.reveal());
    }),
  };

  /** The agent a presented token belongs to, or undefined (unknown, malformed, rotated, deleted). */
  lookup(token: string): string | undefined {
    if (!WEBHOOK_TOKEN_RE.test(token)) return undefined;
    const presented = fingerprint(token);
    const agentId = this.byFingerprint.get(presented);
    const current = agentId === undefined ? undefined : this.ofAgent.get(agentId);
    if (current === undefined) return undefined;
    return timingSafeEqual(Buffer.from(current, 'hex'), Buffer.from(presented, 'hex')) ? agentId : undefined;
  }

  /** True while `token` is still the current token of `agentId` (not rotated, agent not deleted). */
  stillValid(agentId: string, token: string): boolean {
    return this.lookup(token) === agentId;
  }

  /** True when the agent has a token (never creates one). */
  has(agentId: string): boolean {
    return this.ofAgent.has(agentId);
  }

  /** The agent's current token, or undefined when it has none (never creates one). */
  current(agentId: string): string | undefined {
    return this.ofAgent.has(agentId) ? this.deps.store.webhookToken(agentId) : undefined;
  }

  /** spec §3 GET row: the token, created if absent. Rejects when the agent is unknown or the registry write fails. */
  show(agentId: string): Promise<string> {
    return this.ask(agentId, 'webhook.get');
  }

  /** spec §3 POST row: a new token; the old one stops working before this resolves. */
  rotate(agentId: string): Promise<string> {
    return this.ask(agentId, 'webhook.post');
  }

  /** The agent's actor, spawned from the registry on first use, with this index following its changes. */
  private actor(agentId: string): WebhookActor | undefined {
    const actor = this.deps.directory.webhook(agentId, () => {
      const stored = this.deps.store.webhookToken(agentId);
      return stored === undefined ? { fingerprint: null, masked: null } : { fingerprint: fingerprint(stored), masked: maskedToken(stored) };
    });
    if (actor && !this.followed.has(actor)) {
      this.followed.add(actor);
      actor.on('webhook.changed', (ev: WebhookChanged) => this.index(ev.agentId, ev.fingerprint));
    }
    return actor;
  }

  /** Send one request to the agent's actor with a fresh sealed candidate and wait for its answer. */
  private ask(agentId: string, type: 'webhook.get' | 'webhook.post'): Promise<string> {
    const actor = this.actor(agentId);
    if (!actor) return Promise.reject(new Error(`unknown agent ${agentId}`));
    const candidate = new Sealed((this.deps.generate ?? newWebhookToken)());
    return ask<typeof actor, string>(actor, { type, fingerprint: candidate.fingerprint, candidate }, {
      id: (snap) => lastRequestId(snap.context),
      on: 'webhook.answered',
      answer: (ev, requestId) => {
        const a = ev as WebhookAnswer;
        if (a.requestId !== requestId) return undefined;
        if (!a.ok) return a.error instanceof Error ? a.error : new Error(String(a.error));
        if (a.changed) return candidate.reveal();
        return this.deps.store.webhookToken(agentId) ?? new Error(`webhook token of ${agentId} has no value`);
      },
      // The agent was deleted before the request was answered.
      ended: () => new Error(`agent ${agentId} was deleted`),
    });
  }

  /** DELETE /agents cascade (spec §4.3 rule 3): the token dies at once (its actor stops with the agent). */
  remove(agentId: string): void {
    this.index(agentId, null);
  }
}
