import { redactCommand } from '../domain/redact.js';
import type { CommandEvent } from '../domain/ticket.js';

/** How many finished or refused commands each topic keeps for the inspector (behaviour.md §13.2). */
export const RECENT_PER_TOPIC = 20;

/** One entry of a topic's `recent` list (behaviour.md §13.2), already redacted (§13.4). */
export interface RecentCommand {
  ticket: string;
  cmd: string;
  via: string;
  ok: boolean;
  /** Error code of a failure; `QUEUE_FULL`, `QUEUE_TIMEOUT` or `BUSY` for refusals; null when ok. */
  code: string | null;
  /** Time spent waiting before the command started (refusals: until refused). */
  queued_ms: number;
  /** Time the command ran (0 for refusals). */
  duration_ms: number;
  at: string;
}

/**
 * The last commands of every topic, kept whether or not anyone watches, so a page opened after a
 * failure still shows it. Only the redacted first line is kept: bodies never stay in memory here.
 * Keyed by the topic's system id (`topic:<agent>/<topic>`).
 */
/** An entry as kept: the time as a number (an ISO string is made only when someone reads it). */
type Kept = Omit<RecentCommand, 'at'> & { atMs: number };

export class RecentCommands {
  private readonly byTopic = new Map<string, Kept[]>();

  /** Record a `command.finished` or `command.refused` event; other phases are ignored. */
  record(topicId: string, ev: CommandEvent): void {
    if (ev.type !== 'command.finished' && ev.type !== 'command.refused') return;
    const t = ev.ticket;
    const started = ev.type === 'command.finished' ? t.startedAt ?? ev.at : ev.at;
    const entry: Kept = {
      ticket: t.id, cmd: redactCommand(t.cmd), via: t.via,
      ok: ev.type === 'command.finished' ? ev.result.ok : false,
      code: ev.type === 'command.finished' ? ev.result.code : ev.reason,
      queued_ms: Math.max(0, started - t.queuedAt), duration_ms: Math.max(0, ev.at - started), atMs: ev.at,
    };
    let list = this.byTopic.get(topicId);
    if (!list) {
      list = [];
      this.byTopic.set(topicId, list);
    }
    list.push(entry);
    if (list.length > RECENT_PER_TOPIC) list.shift();
  }

  /** The topic's recent commands, oldest first. */
  of(topicId: string): RecentCommand[] {
    return (this.byTopic.get(topicId) ?? []).map(({ atMs, ...rest }) => ({ ...rest, at: new Date(atMs).toISOString() }));
  }

  /** Forget a topic that ended (closed session, deleted agent). */
  forget(topicId: string): void {
    this.byTopic.delete(topicId);
  }
}
