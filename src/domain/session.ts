import type { TopicRef } from './topic.js';
import type { DocMeta } from './result.js';

/** The document currently open in a topic. */
export interface OpenDocument {
  /** Absolute URI (spec §2 doc.uri). */
  readonly uri: string;
  readonly title: string | null;
  /** `#<id>` or null (spec §2 doc.current_block). */
  readonly currentBlock: string | null;
  /** Display form (behaviour.md §1.4). */
  readonly display: string;
  /** Document model specifics owned by the documents layer. */
  readonly data?: unknown;
}

/** A shortcut value: text or a tuple (behaviour.md §3.7, §4.11). */
export type ShortcutValue = string | string[];

/** One entry of a topic's document history (behaviour.md §3.6). */
export interface HistoryRef {
  readonly uri: string;
  readonly anchor: string | null;
}

/**
 * Per-topic session state (spec §2 Topic; behaviour.md §1.3): data only, memory only (it does not
 * survive a restart). It lives in the topic actor's context and changes only by `SessionChange`
 * events the topic applies (architecture.md "One read model"); a command reads it and says what it
 * changed. Effect handles of a session (its abort signal) live with the actors, not here.
 */
export interface SessionState {
  /** Unique per session in this process: a renewed session has a new id, so late changes of the old one are dropped. */
  readonly id: number;
  readonly agentId: string;
  readonly ref: TopicRef;
  readonly createdAt: number;
  readonly doc: OpenDocument | null;
  /** behaviour.md §3.6: previous (uri, anchor) entries, newest last. */
  readonly history: readonly HistoryRef[];
  /** behaviour.md §1.4: base directory, null = the home. */
  readonly baseDir: string | null;
  /** spec §2 Variables: session variables. A new map after every change, so derived values can be keyed by it. */
  readonly vars: ReadonlyMap<string, string>;
  readonly pageShortcuts: ReadonlyMap<string, ShortcutValue>;
  readonly valueShortcuts: ReadonlyMap<string, ShortcutValue>;
  /**
   * Working memory of features for this session (edit read records, undo, the last response), keyed
   * by feature name. Not part of the read model: never shown, never serialised.
   */
  readonly ext: Map<string, unknown>;
}

/**
 * What a command changed in its session (behaviour.md §13.7 names the events). The topic applies each
 * with `applySessionChange` and emits it; readers (inspector, traces) see these, never a mutation.
 */
export type SessionChange =
  | { type: 'session.opened'; doc: OpenDocument; pageShortcuts: ReadonlyMap<string, ShortcutValue>; history: readonly HistoryRef[]; baseDir: string | null }
  | { type: 'session.navigated'; block: string | null }
  | { type: 'session.based'; baseDir: string | null }
  | { type: 'session.closed' }
  | { type: 'session.set'; scope: 'session'; values: ReadonlyArray<readonly [string, string]> }
  | { type: 'session.cleared'; scope: 'session'; names: readonly string[] }
  | { type: 'session.shortcuts'; valueShortcuts: ReadonlyMap<string, ShortcutValue> };

/** A change as the topic actor emits it, once applied (its readers: inspection, traces). */
export type SessionEvent = SessionChange & { agentId: string; topic: string; sessionId: number; at: number };

let sessions = 0;

/** A fresh, empty session for a topic. */
export function newSession(agentId: string, ref: TopicRef, now: number): SessionState {
  return {
    id: ++sessions, agentId, ref, createdAt: now, doc: null, history: [], baseDir: null,
    vars: new Map(), pageShortcuts: new Map(), valueShortcuts: new Map(), ext: new Map(),
  };
}

/** The session after one change (pure: the input is not modified). */
export function applySessionChange(s: SessionState, c: SessionChange): SessionState {
  switch (c.type) {
    case 'session.opened':
      return { ...s, doc: c.doc, pageShortcuts: c.pageShortcuts, history: c.history, baseDir: c.baseDir };
    case 'session.navigated':
      return s.doc ? { ...s, doc: { ...s.doc, currentBlock: c.block } } : s;
    case 'session.based':
      return { ...s, baseDir: c.baseDir };
    case 'session.closed':
      return { ...s, doc: null, history: [], pageShortcuts: new Map(), baseDir: null };
    case 'session.set': {
      const vars = new Map(s.vars);
      for (const [name, value] of c.values) vars.set(name, value);
      return { ...s, vars };
    }
    case 'session.cleared': {
      const vars = new Map(s.vars);
      for (const name of c.names) vars.delete(name);
      return { ...s, vars };
    }
    case 'session.shortcuts':
      return { ...s, valueShortcuts: c.valueShortcuts };
  }
}

/**
 * A command's view of its session: it reads `current` (its own changes included) and records each
 * change; the topic applies the recorded list when the command is done.
 */
export class SessionDraft {
  private state: SessionState;
  private recorded: SessionChange[] | null = null;

  constructor(session: SessionState) {
    this.state = session;
  }

  get current(): SessionState {
    return this.state;
  }

  /** What was changed, in order (most commands change nothing: no list is made for them). */
  get changes(): readonly SessionChange[] {
    return this.recorded ?? NO_CHANGES;
  }

  change(c: SessionChange): void {
    this.state = applySessionChange(this.state, c);
    (this.recorded ??= []).push(c);
  }
}

const NO_CHANGES: readonly SessionChange[] = Object.freeze([]);

/** head.meta of spec §2 for a session (hubs always null: behaviour.md §1.5). */
export function sessionMeta(s: SessionState): DocMeta | null {
  if (s.ref.type === 'hub' || !s.doc) return null;
  return { uri: s.doc.uri, title: s.doc.title, current_block: s.doc.currentBlock };
}
