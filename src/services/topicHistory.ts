import type { SessionEvent } from '../domain/session.js';

/** How many changes each topic keeps for the inspector (behaviour.md §13.7 `history`). */
export const HISTORY_PER_TOPIC = 60;

/** The session changes a topic's history keeps (behaviour.md §13.7); `based` and `shortcuts` are not shown. */
export type HistorySessionType = 'session.opened' | 'session.navigated' | 'session.closed' | 'session.set' | 'session.cleared';

/** What a kept session change shows besides its type: names, never values (§13.4). */
export type SessionDetail =
  | { type: 'session.opened'; uri: string; title: string | null }
  | { type: 'session.navigated'; uri: string | null; block: string | null }
  | { type: 'session.closed' }
  | { type: 'session.set' | 'session.cleared'; scope: string; names: readonly string[] };

/** One entry of a topic's `history` as the snapshot shows it (behaviour.md §13.7). */
export type HistoryEntry =
  | { at: string; type: 'state'; from: string; to: string; event: string }
  | ({ at: string } & SessionDetail);

/** A state change as kept: shared by every topic that made it (the machine has a handful). */
interface StateKind {
  from: string;
  to: string;
  event: string;
}

/** Codes below this are session types (their detail kept beside), from it on state changes. */
const SESSION_CODES: readonly HistorySessionType[] = ['session.opened', 'session.navigated', 'session.closed', 'session.set', 'session.cleared'];
const FIRST_STATE_CODE = SESSION_CODES.length;
/** A code for a state change beyond the table (never met with the topic machine): its kind kept as detail. */
const OTHER_STATE_CODE = 255;

/**
 * State changes seen so far, one code each, shared by all topics: an entry is then a time and a
 * byte, and a thousand agents' topics hold no copy of the same three strings.
 */
const stateKinds: StateKind[] = [];
const stateCodes = new Map<string, number>();

function stateCode(from: string, to: string, event: string): number {
  const key = `${from}\u0000${to}\u0000${event}`;
  let code = stateCodes.get(key);
  if (code === undefined) {
    if (FIRST_STATE_CODE + stateKinds.length >= OTHER_STATE_CODE) return OTHER_STATE_CODE;
    code = FIRST_STATE_CODE + stateKinds.length;
    stateKinds.push({ from, to, event });
    stateCodes.set(key, code);
  }
  return code;
}

/** A topic's history: when it starts, the last state seen, and the ring, made at the first change. */
interface Kept {
  /** When the topic's actor started (ms): the history covers everything since, until the ring wraps. */
  readonly startedAt: number;
  last: string;
  times: Float64Array | null;
  codes: Uint8Array | null;
  /** Session changes' details (and a state change beyond the table), by ring slot; made at the first such entry. */
  details: Array<SessionDetail | StateKind | undefined> | null;
  /** Changes recorded in all: the next slot is `count % HISTORY_PER_TOPIC`. */
  count: number;
}

/** What a topic's history reads as: its entries oldest first, and where it starts. */
export interface TopicHistoryView {
  /** ms since the epoch: the topic's start, or the oldest kept entry once older ones were dropped. */
  since: number;
  /** Whether older changes were dropped (more than {@link HISTORY_PER_TOPIC} happened). */
  truncated: boolean;
  entries: HistoryEntry[];
}

const stateValue = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value) ?? 'null');

/**
 * The public detail of a session event (behaviour.md §13.7), or null for the changes the history
 * does not show. `uri` is the topic's document now (a navigation event carries only its block).
 * `set` keeps the names of what was set: its values are never read here.
 */
export function sessionDetail(ev: SessionEvent, uri: string | null): SessionDetail | null {
  switch (ev.type) {
    case 'session.opened':
      return { type: ev.type, uri: ev.doc.uri, title: ev.doc.title };
    case 'session.navigated':
      return { type: ev.type, uri, block: ev.block };
    case 'session.closed':
      return { type: ev.type };
    case 'session.set':
      return { type: ev.type, scope: ev.scope, names: ev.values.map(([name]) => name) };
    case 'session.cleared':
      return { type: ev.type, scope: ev.scope, names: [...ev.names] };
    default:
      return null;
  }
}

/**
 * The last {@link HISTORY_PER_TOPIC} changes of every topic (behaviour.md §13.7), kept whether or
 * not anyone watches, so a page opened later still shows what happened before. Bounded and small:
 * a topic gets its ring at its first change, an entry is a time and a one-byte code (session
 * changes add their names or address); nothing is serialised until someone reads it.
 * Keyed by the topic's system id (`topic:<agent>/<topic>`).
 */
export class TopicHistories {
  private readonly byTopic = new Map<string, Kept>();

  /** A topic's actor started in state `value` (its history starts now, empty). */
  started(topicId: string, value: unknown, at: number): void {
    this.byTopic.set(topicId, { startedAt: at, last: stateValue(value), times: null, codes: null, details: null, count: 0 });
  }

  /**
   * A snapshot of the topic after `event`: recorded when its state changed. A topic met first here
   * (started before anyone kept its history) starts now.
   */
  snapshot(topicId: string, value: unknown, event: string, now: () => number): void {
    const kept = this.byTopic.get(topicId);
    // Most snapshots leave the state as it was; the flat machine's values are strings, compared as they are.
    if (kept && kept.last === value) return;
    const to = stateValue(value);
    if (!kept) return this.started(topicId, to, now());
    if (kept.last === to) return;
    const code = stateCode(kept.last, to, event);
    this.push(kept, now(), code, code === OTHER_STATE_CODE ? { from: kept.last, to, event } : undefined);
    kept.last = to;
  }

  /** A session change of the topic; returns its detail (null when the history does not show it). */
  session(topicId: string, ev: SessionEvent, uri: string | null): SessionDetail | null {
    const detail = sessionDetail(ev, uri);
    if (!detail) return null;
    let kept = this.byTopic.get(topicId);
    if (!kept) {
      this.started(topicId, 'idle', ev.at);
      kept = this.byTopic.get(topicId) as Kept;
    }
    this.push(kept, ev.at, SESSION_CODES.indexOf(detail.type), detail);
    return detail;
  }

  private push(kept: Kept, at: number, code: number, detail: SessionDetail | StateKind | undefined): void {
    kept.times ??= new Float64Array(HISTORY_PER_TOPIC);
    kept.codes ??= new Uint8Array(HISTORY_PER_TOPIC);
    const slot = kept.count % HISTORY_PER_TOPIC;
    kept.times[slot] = at;
    kept.codes[slot] = code;
    if (detail !== undefined) (kept.details ??= [])[slot] = detail;
    else if (kept.details) kept.details[slot] = undefined;
    kept.count++;
  }

  /**
   * The topic's history, oldest first, as kept (its readers mask it: the snapshot, the live feed);
   * null for a topic it knows nothing of.
   */
  of(topicId: string): TopicHistoryView | null {
    const kept = this.byTopic.get(topicId);
    if (!kept) return null;
    const n = Math.min(kept.count, HISTORY_PER_TOPIC);
    const first = kept.count - n;
    const entries: HistoryEntry[] = [];
    for (let i = first; i < kept.count; i++) {
      const slot = i % HISTORY_PER_TOPIC;
      const at = new Date((kept.times as Float64Array)[slot]).toISOString();
      const code = (kept.codes as Uint8Array)[slot];
      const detail = kept.details?.[slot];
      if (code < FIRST_STATE_CODE) entries.push({ at, ...(detail as SessionDetail) });
      else {
        const k = code === OTHER_STATE_CODE ? (detail as StateKind) : stateKinds[code - FIRST_STATE_CODE];
        entries.push({ at, type: 'state', from: k.from, to: k.to, event: k.event });
      }
    }
    const truncated = first > 0;
    return { since: truncated ? (kept.times as Float64Array)[first % HISTORY_PER_TOPIC] : kept.startedAt, truncated, entries };
  }

  /** Forget a topic that ended (its actor stopped). */
  forget(topicId: string): void {
    this.byTopic.delete(topicId);
  }
}
