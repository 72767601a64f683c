import { RECENT_PER_TOPIC } from '../services/recentCommands.js';
import type { LiveMessage } from '../services/inspectionMessages.js';
import type { InspectionSnapshot } from '../services/inspectionSnapshot.js';

/** The transitions a coalesced frame keeps per actor: the page's timeline keeps this many (web/inspector/model.js). */
export const COALESCE_TRANSITIONS = 60;
/** Tickets of one topic a waiting-list entry is kept for at most (1 running + 5 waiting fill 6; leaves are not announced). */
const ANNOUNCED_MAX = 64;

/** Whether a command message ends its ticket (finished or refused) rather than announcing it (queued, started). */
const closes = (type: string): boolean => type === 'command.finished' || type === 'command.refused';

/** A coalesced frame: the kept messages in order, and what was left out. */
export interface CoalescedFrame {
  texts: string[];
  droppedCommands: number;
  droppedMessages: number;
}

/**
 * The coalesced live feed of behaviour.md §13.3 (`/inspect/ws?coalesce=1`, the page's): under a
 * flood a frame spans up to a second, and of the commands that both began and ended inside it only
 * each topic's last {@link RECENT_PER_TOPIC} keep their messages, as only the last 20 are shown
 * (§13.2 `recent`); of each actor's transitions, the last {@link COALESCE_TRANSITIONS}. A command
 * the client was already told about (queued or started in an earlier frame, or in its snapshot)
 * always keeps its messages, so no ticket is left waiting or running on the client's side. What a
 * client builds from a coalesced frame is what it would have built from the whole frame, minus the
 * commands it would have pushed out of its last 20 anyway.
 */
export class Coalescer {
  private entries: LiveMessage[] = [];
  /** Per topic (`<agent>/<topic>`): tickets the clients were told about and not yet told the end of. */
  private readonly announced = new Map<string, Set<string>>();

  /** Start from a snapshot the clients got: its running and waiting tickets are announced. */
  constructor(snapshot: InspectionSnapshot) {
    for (const a of snapshot.agents) {
      for (const t of a.topics) {
        const tickets = [t.running, ...t.waiting].filter((x) => x !== null).map((x) => String(x.ticket));
        for (const ticket of tickets) this.announce(`${a.agent_id}/${t.topic}`, ticket);
      }
    }
  }

  /** Messages gathered since the last frame. */
  get size(): number {
    return this.entries.length;
  }

  add(m: LiveMessage): void {
    this.entries.push(m);
  }

  /**
   * The frame of everything gathered, coalesced, each kept message written by `json` (a command is
   * written only when kept); the gathering starts again.
   */
  take(json: (m: LiveMessage) => string): CoalescedFrame {
    const entries = this.entries;
    this.entries = [];
    const keep = new Array<boolean>(entries.length);
    const closings = new Map<string, number>();
    const transitions = new Map<string, number>();
    const dropped = new Set<string>();
    let droppedCommands = 0;
    // Backwards: a topic's last closings and an actor's last transitions are met first, and a
    // ticket's closing before its opening.
    for (let i = entries.length - 1; i >= 0; i--) {
      const e = entries[i];
      if (e.kind === 'transition') {
        const n = (transitions.get(e.actor) ?? 0) + 1;
        transitions.set(e.actor, n);
        keep[i] = n <= COALESCE_TRANSITIONS;
      } else if (e.kind === 'other') {
        keep[i] = true;
      } else {
        const topic = `${e.agentId}/${e.topic}`;
        const key = `${topic}\n${e.ticketId}`;
        if (closes(e.type) && !this.announced.get(topic)?.has(e.ticketId)) {
          const n = (closings.get(topic) ?? 0) + 1;
          closings.set(topic, n);
          if (n > RECENT_PER_TOPIC) {
            dropped.add(key);
            droppedCommands++;
          }
        }
        keep[i] = !dropped.has(key);
      }
    }
    const texts: string[] = [];
    for (let i = 0; i < entries.length; i++) {
      if (!keep[i]) continue;
      const e = entries[i];
      texts.push(json(e));
      if (e.kind !== 'command') continue;
      if (closes(e.type)) this.settle(`${e.agentId}/${e.topic}`, e.ticketId);
      else this.announce(`${e.agentId}/${e.topic}`, e.ticketId);
    }
    return { texts, droppedCommands, droppedMessages: entries.length - texts.length };
  }

  private announce(topic: string, ticket: string): void {
    let set = this.announced.get(topic);
    if (!set) this.announced.set(topic, (set = new Set()));
    set.add(ticket);
    // A ticket that left its queue (its client went away) is never closed: forget the oldest.
    if (set.size > ANNOUNCED_MAX) set.delete(set.values().next().value as string);
  }

  private settle(topic: string, ticket: string): void {
    const set = this.announced.get(topic);
    if (!set) return;
    set.delete(ticket);
    if (set.size === 0) this.announced.delete(topic);
  }
}
