import type { AckOutcome, EventListing, EventRecord, EventsPort } from '../domain/events.js';
import type { AgentStore } from '../domain/ports.js';
import type { FileInbox } from '../stores/inbox.js';
import type { EventStreams } from './eventStreams.js';
import type { WebhookTokens } from './webhooks.js';

/** Why an intake was refused after its token had matched. */
export class IntakeRefused extends Error {}

/**
 * The events part of the system facade: webhook intake, the inbox operations of the event
 * commands, streams and the agent-deletion cascade (spec §3 Event and Webhook token, §4.4, §6).
 */
export class EventsService implements EventsPort {
  constructor(
    readonly agents: AgentStore,
    readonly inbox: FileInbox,
    readonly streams: EventStreams,
    readonly webhooks: WebhookTokens,
    private readonly urlOf: (token: string) => string,
  ) {}

  /**
   * Store a webhook text for the agent that `token` names (behaviour.md §9.7): the token is checked
   * again here because it may have been rotated or deleted while the body was read. Resolves once
   * the event is durable; then every open stream of the agent gets it.
   */
  async intake(token: string, text: string): Promise<EventRecord> {
    const agentId = this.webhooks.lookup(token);
    if (agentId === undefined || !this.agents.get(agentId)) throw new IntakeRefused('token no longer valid');
    const event = await this.inbox.add(agentId, text);
    this.streams.publish(event);
    return event;
  }

  list(agentId: string, opts: { all: boolean; limit: number }): EventListing {
    return this.inbox.list(agentId, opts);
  }

  get(agentId: string, id: string): EventRecord | undefined {
    return this.inbox.get(agentId, id);
  }

  /** behaviour.md §2.10: every id must be known, else nothing changes; acked ones stay acked. */
  async ack(agentId: string, ids: string[] | 'all'): Promise<AckOutcome> {
    const wanted = ids === 'all' ? this.inbox.pendingIds(agentId) : [...new Set(ids)];
    const found: EventRecord[] = [];
    for (const id of wanted) {
      const e = this.inbox.get(agentId, id);
      if (!e) return { ok: false, unknown: id };
      found.push(e);
    }
    await this.inbox.ack(agentId, found.filter((e) => e.status === 'pending').map((e) => e.id));
    return { ok: true, acked: found.map((e) => ({ id: e.id, already: e.status === 'acked' })) };
  }

  clear(agentId: string, all: boolean): Promise<number> {
    return this.inbox.clear(agentId, all);
  }

  async showWebhook(agentId: string): Promise<string> {
    return this.urlOf(await this.webhooks.show(agentId));
  }

  async rotateWebhook(agentId: string): Promise<string> {
    return this.urlOf(await this.webhooks.rotate(agentId));
  }

  /** DELETE /agents cascade: token dead, streams ended, inbox closed and forgotten. */
  async deleteAgent(agentId: string): Promise<void> {
    this.webhooks.remove(agentId);
    this.streams.closeAgent(agentId);
    await this.inbox.drop(agentId);
  }

  /** Shutdown: end the streams, finish and close the logs. */
  async shutdown(): Promise<void> {
    this.streams.closeAll();
    await this.inbox.closeAll();
  }
}
