import { fromPromise, type Actor } from 'xstate';
import type { Clock } from '../domain/ports.js';
import { newSession, type SessionState } from '../domain/session.js';
import type { TopicRef } from '../domain/topic.js';
import { topicQueueMachine, type RefusalReason } from '../machines/topicQueue.js';
import type { ActorFactory } from './inspection.js';

/** How the caller hears about its command (the route or the MCP tool). */
export interface ExecSink {
  /** The command left the queue and starts now. */
  onStart(): void;
  /** Refused without running (429, 504, BUSY). */
  onRefuse(reason: RefusalReason): void;
  /** Finished. */
  onResult(result: unknown): void;
}

/** Runs one command text against a session. */
export type CommandRunner = (session: SessionState, cmd: string, signal: AbortSignal) => Promise<unknown>;

interface Pending {
  cmd: string;
  sink: ExecSink;
}

let seq = 0;

/**
 * A topic: its runtime state (spec §2 Topic) and its command queue, an actor of the spec §3 queue
 * machine. One command runs at a time, in arrival order.
 */
export class TopicActor {
  session: SessionState;
  private readonly pending = new Map<string, Pending>();
  private readonly actor: Actor<typeof topicQueueMachine>;
  private running: { id: string; abort: AbortController } | null = null;

  constructor(agentId: string, readonly ref: TopicRef, opts: { factory: ActorFactory; clock: Clock; run: CommandRunner; maxWaiting: number; waitMs: number }) {
    this.session = newSession(agentId, ref, opts.clock.now());
    const machine = topicQueueMachine.provide({
      actions: {
        startTicket: (_a, { ticket }) => this.pending.get(ticket.id)?.sink.onStart(),
        refuseTicket: (_a, { ticket, reason }) => {
          const p = this.pending.get(ticket.id);
          this.pending.delete(ticket.id);
          p?.sink.onRefuse(reason);
        },
      },
      actors: {
        runCommand: fromPromise(async ({ input }) => {
          const p = this.pending.get(input.ticket.id);
          if (!p) return;
          const abort = new AbortController();
          this.running = { id: input.ticket.id, abort };
          try {
            p.sink.onResult(await opts.run(this.session, p.cmd, abort.signal));
          } finally {
            this.running = null;
            this.pending.delete(input.ticket.id);
          }
        }),
      },
    });
    this.actor = opts.factory.create(machine, { maxWaiting: opts.maxWaiting, waitMs: opts.waitMs }, `topic:${agentId}:${ref.topic}`);
    this.actor.start();
  }

  /**
   * Submit a command. `queue` waits its turn (spec §3); `try` runs only when idle, else BUSY
   * (spec §4.8 MCP). Returns the ticket id for `leave`.
   */
  submit(cmd: string, sink: ExecSink, policy: 'queue' | 'try'): string {
    const id = `t${++seq}`;
    this.pending.set(id, { cmd, sink });
    this.actor.send({ type: policy === 'queue' ? 'command.arrive' : 'command.try', ticket: { id } });
    return id;
  }

  /** The client disconnected: a waiting ticket is removed with no response (spec §3). */
  leave(ticketId: string): void {
    const snap = this.actor.getSnapshot();
    if (snap.context.waiting.some((t) => t.id === ticketId)) {
      this.actor.send({ type: 'command.leave', ticketId });
      this.pending.delete(ticketId);
    }
  }

  get executing(): boolean {
    return this.actor.getSnapshot().value === 'executing';
  }

  get queueLength(): number {
    return this.actor.getSnapshot().context.waiting.length;
  }

  /** True when nothing runs or waits. */
  get quiet(): boolean {
    return !this.executing && this.queueLength === 0;
  }

  /**
   * End the session (DELETE /sessions, agent deletion, home change, shutdown): abort the running
   * command and dispose session resources. Waiting commands later run on a fresh session
   * (behaviour.md §1.3).
   */
  async closeSession(now: number): Promise<void> {
    this.running?.abort.abort();
    const old = this.session;
    this.session = newSession(old.agentId, this.ref, now);
    for (const d of old.disposers) await d();
  }

  /** Stop the actor (after closeSession, when the topic is dropped). */
  stop(): void {
    this.actor.stop();
  }
}
