import { maskValues, redactCommand, redactText, type ValueMasks } from '../domain/redact.js';
import type { CommandEvent } from '../domain/ticket.js';

/** How many finished or refused commands each topic keeps for the inspector (behaviour.md §13.2). */
export const RECENT_PER_TOPIC = 20;

/** One entry of a topic's `recent` list (behaviour.md §13.2), already redacted (§13.4). */
export interface RecentCommand {
  ticket: string;
  cmd: string;
  request_id: string | null;
  via: string;
  ok: boolean;
  /** Error code of a failure; `QUEUE_FULL`, `QUEUE_TIMEOUT` or `BUSY` for refusals; null when ok. */
  code: string | null;
  /** Time spent waiting before the command started (refusals: until refused). */
  queued_ms: number;
  /** Time the command ran (0 for refusals). */
  duration_ms: number;
  at: string;
  /** The limit a QUEUE_FULL refusal hit: how many may wait (behaviour.md §13.7). */
  queue_limit?: number;
  /** The limit a QUEUE_TIMEOUT refusal hit: how long one may wait. */
  wait_limit_ms?: number;
}

/**
 * An entry as kept: the time as a number (an ISO string is made only when someone reads it), and
 * the id of the masks its `cmd` was redacted with (0: none; the id, not the list, which holds values).
 */
type Kept = Omit<RecentCommand, 'at'> & { atMs: number; masksId: number };

/**
 * The last commands of every topic, kept whether or not anyone watches, so a page opened after a
 * failure still shows it. Only the redacted first line is kept: bodies never stay in memory here,
 * nor values of the env store or the session that were set when the command ended (so an `/unset`
 * afterwards does not bring them back). Values set later are masked when the list is read.
 * Keyed by the topic's system id (`topic:<agent>/<topic>`).
 */
export class RecentCommands {
  private readonly byTopic = new Map<string, Kept[]>();

  /**
   * Record a `command.finished` or `command.refused` event; other phases are ignored. `masksOf` gives
   * the masks of the command's agent and topic now (cached lists: cheap, and null at once when the
   * agent has no values).
   */
  record(topicId: string, ev: CommandEvent, masksOf: (agentId: string, topicId: string) => ValueMasks | null = () => null): void {
    if (ev.type !== 'command.finished' && ev.type !== 'command.refused') return;
    const t = ev.ticket;
    const started = ev.type === 'command.finished' ? t.startedAt ?? ev.at : ev.at;
    const masks = masksOf(ev.agentId, topicId);
    const entry: Kept = {
      ticket: t.id, cmd: redactCommand(t.cmd, masks), masksId: masks?.id ?? 0, request_id: t.requestId === null ? null : redactText(t.requestId, masks), via: t.via,
      ok: ev.type === 'command.finished' ? ev.result.ok : false,
      code: ev.type === 'command.finished' ? ev.result.code : ev.reason,
      queued_ms: Math.max(0, started - t.queuedAt), duration_ms: Math.max(0, ev.at - started), atMs: ev.at,
    };
    // Only a refusal names the limit it hit (no empty object spread for every finished command).
    if (ev.type === 'command.refused' && ev.reason === 'QUEUE_FULL') entry.queue_limit = ev.limits.max;
    if (ev.type === 'command.refused' && ev.reason === 'QUEUE_TIMEOUT') entry.wait_limit_ms = ev.limits.waitMs;
    let list = this.byTopic.get(topicId);
    if (!list) {
      list = [];
      this.byTopic.set(topicId, list);
    }
    list.push(entry);
    if (list.length > RECENT_PER_TOPIC) list.shift();
  }

  /**
   * The topic's recent commands, oldest first; `masks` are the topic's masks now: an entry
   * redacted with others (a value set since) is masked again with them.
   */
  of(topicId: string, masks: ValueMasks | null = null): RecentCommand[] {
    return (this.byTopic.get(topicId) ?? []).map((e) => ({
      ticket: e.ticket, cmd: masks && masks.id !== e.masksId ? maskValues(e.cmd, masks) : e.cmd, request_id: e.request_id, via: e.via, ok: e.ok, code: e.code,
      queued_ms: e.queued_ms, duration_ms: e.duration_ms, at: new Date(e.atMs).toISOString(),
      ...(e.queue_limit !== undefined ? { queue_limit: e.queue_limit } : {}),
      ...(e.wait_limit_ms !== undefined ? { wait_limit_ms: e.wait_limit_ms } : {}),
    }));
  }

  /** Forget a topic that ended (closed session, deleted agent). */
  forget(topicId: string): void {
    this.byTopic.delete(topicId);
  }
}
