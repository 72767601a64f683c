import type { AckOutcome, EventHead, EventListing, EventRecord, EventStatus, EventsPort } from '../domain/events.js';
import { nextEventState } from '../machines/event.js';
import type { InboxPort } from '../domain/events.js';
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
    readonly inbox: InboxPort,
    readonly streams: EventStreams,
    readonly webhooks: WebhookTokens,
    private readonly urlOf: (token: string) => string,
    /** Told of every event the inbox took (the trace recorder's webhook steps, behaviour.md §14.2). */
    private readonly onIntake: (event: EventRecord) => void = () => undefined,
  ) {}

  /**
   * Store a webhook text for the agent that `token` named when the request arrived (behaviour.md
   * §9.7): the token is checked again here because it may have been rotated or deleted while the
   * body was read. Resolves once the event is durable; then every open stream of the agent gets it.
   */
  async intake(agentId: string, token: string, text: string): Promise<EventRecord> {
    if (!this.webhooks.stillValid(agentId, token)) throw new IntakeRefused('token no longer valid');
    const event = await this.inbox.add(agentId, text, nextEventState('none', 'webhook.post') as EventStatus);
    this.streams.publish(event);
    this.onIntake(event);
    return event;
  }

  list(agentId: string, opts: { all: boolean; limit: number }): EventListing {
    return this.inbox.list(agentId, opts);
  }

  get(agentId: string, id: string): EventRecord | undefined {
    return this.inbox.get(agentId, id);
  }

  /**
   * behaviour.md §2.10: every id must be known, else nothing changes. The event machine says which
   * events `/events.ack` moves (pending → acked); the others are already acked and stay so.
   */
  async ack(agentId: string, ids: string[] | 'all'): Promise<AckOutcome> {
    const moves = (e: EventHead) => nextEventState(e.status, 'events.ack') !== e.status;
    let found: EventHead[];
    if (ids === 'all') {
      found = this.inbox.all(agentId).filter(moves);
    } else {
      found = [];
      for (const id of new Set(ids)) {
        const e = this.inbox.get(agentId, id);
        if (!e) return { ok: false, unknown: id };
        found.push(e);
      }
    }
    await this.inbox.ack(agentId, found.filter(moves).map((e) => e.id));
    return { ok: true, acked: found.map((e) => ({ id: e.id, already: !moves(e) })) };
  }

  /** `/events.clear [--all]`: the machine decides which events the trigger deletes. */
  clear(agentId: string, all: boolean): Promise<number> {
    const trigger = all ? 'events.clear.all' : 'events.clear';
    return this.inbox.clear(agentId, (e) => nextEventState(e.status, trigger) === 'deleted');
  }

  async showWebhook(agentId: string): Promise<string> {
    return this.urlOf(await this.webhooks.show(agentId));
  }

  async rotateWebhook(agentId: string): Promise<string> {
    return this.urlOf(await this.webhooks.rotate(agentId));
  }

  webhookUrl(agentId: string): string | null {
    const token = this.webhooks.current(agentId);
    return token === undefined ? null : this.urlOf(token);
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
