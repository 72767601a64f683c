import type { EventRecord } from '../domain/events.js';
import { EVENT_PING_MS, EVENT_STREAMS_PER_AGENT } from '../domain/limits.js';
import type { Clock } from '../domain/ports.js';

/** Where a stream's SSE events go (the HTTP route adapts an SseWriter to this). */
export interface StreamSink {
  /** `tag`: what a route may match the event on without it being sent (an install's raw request id). */
  send(name: 'ready' | 'event' | 'install' | 'ping', data: unknown, tag?: string | null): void;
  /** End the response (agent deleted, daemon stopping). */
  end(): void;
}

/** An open stream as its owner sees it. */
export interface StreamHandle {
  /** Unregister (the client left); idempotent. */
  close(): void;
}

interface OpenStream {
  sink: StreamSink;
  timer: unknown;
  closed: boolean;
}

/**
 * Open event streams per agent (spec §4.5, §6; behaviour.md §9.8): `ready` on open, one `event` per
 * event appended afterwards (never a backfill), `ping` every 15 s on the injected clock, at most
 * 16 per agent. Delivery is notification only: nothing here touches an event's status. The install
 * feature keeps a second set for `GET /installs/stream`, whose streams carry `install` progress.
 */
export class EventStreams {
  private readonly byAgent = new Map<string, Set<OpenStream>>();

  constructor(private readonly clock: Clock, private readonly pingMs = EVENT_PING_MS, readonly maxPerAgent = EVENT_STREAMS_PER_AGENT) {}

  /** Open streams of an agent. */
  count(agentId: string): number {
    return this.byAgent.get(agentId)?.size ?? 0;
  }

  /** Register a stream and send `ready` (`{agent_id}` unless given); null when the agent already has the maximum. */
  open(agentId: string, sink: StreamSink, ready: Record<string, unknown> = { agent_id: agentId }): StreamHandle | null {
    let set = this.byAgent.get(agentId);
    if (!set) {
      set = new Set();
      this.byAgent.set(agentId, set);
    }
    if (set.size >= this.maxPerAgent) return null;
    const s: OpenStream = { sink, timer: null, closed: false };
    set.add(s);
    sink.send('ready', ready);
    this.schedulePing(s);
    return { close: () => this.detach(agentId, s) };
  }

  private schedulePing(s: OpenStream): void {
    s.timer = this.clock.setTimeout(() => {
      if (s.closed) return;
      s.sink.send('ping', { t: new Date(this.clock.now()).toISOString() });
      this.schedulePing(s);
    }, this.pingMs);
  }

  private detach(agentId: string, s: OpenStream): void {
    if (s.closed) return;
    s.closed = true;
    this.clock.clearTimeout(s.timer);
    const set = this.byAgent.get(agentId);
    set?.delete(s);
    if (set && set.size === 0) this.byAgent.delete(agentId);
  }

  /** spec §6 Emission: one `event` on every open stream of the agent. */
  publish(event: EventRecord): void {
    this.publishTo(event.agentId, 'event', event);
  }

  /** One SSE event on every open stream of the agent (the install progress streams use `install`, tagged with its request id). */
  publishTo(agentId: string, name: 'event' | 'install', data: unknown, tag?: string | null): void {
    for (const s of this.byAgent.get(agentId) ?? []) s.sink.send(name, data, tag);
  }

  /** End every stream of an agent (DELETE /agents, spec §6); returns how many. */
  closeAgent(agentId: string): number {
    const streams = [...(this.byAgent.get(agentId) ?? [])];
    for (const s of streams) {
      this.detach(agentId, s);
      s.sink.end();
    }
    return streams.length;
  }

  /** End every stream (shutdown, behaviour.md §1.1). */
  closeAll(): void {
    for (const id of [...this.byAgent.keys()]) this.closeAgent(id);
  }
}
