import type { TopicRef } from './topic.js';
import type { DocMeta } from './result.js';

/** The document currently open in a topic (filled by the documents issue). */
export interface OpenDocument {
  /** Absolute URI (spec §2 doc.uri). */
  uri: string;
  title: string | null;
  /** `#<id>` or null (spec §2 doc.current_block). */
  currentBlock: string | null;
  /** Display form (behaviour.md §1.4). */
  display: string;
  /** Document model specifics owned by the documents layer. */
  data?: unknown;
}

/** A shortcut value: text or a tuple (behaviour.md §3.7, §4.11). */
export type ShortcutValue = string | string[];

/**
 * Session variables (spec §2): a Map that counts its changes, so what is derived from the values
 * (the inspector's masks, behaviour.md §13.4) is rebuilt only after one.
 */
export class SessionVars extends Map<string, string> {
  /** Bumped by every set, delete and clear. */
  revision = 0;

  constructor() {
    super();
  }

  override set(name: string, value: string): this {
    this.revision++;
    return super.set(name, value);
  }

  override delete(name: string): boolean {
    this.revision++;
    return super.delete(name);
  }

  override clear(): void {
    this.revision++;
    super.clear();
  }
}

/**
 * Per-topic runtime state (spec §2 Topic; behaviour.md §1.3). Memory only:
 * it does not survive a restart.
 */
export interface SessionState {
  agentId: string;
  ref: TopicRef;
  createdAt: number;
  doc: OpenDocument | null;
  /** behaviour.md §3.6: previous (uri, anchor) entries, newest last. */
  history: Array<{ uri: string; anchor: string | null }>;
  /** behaviour.md §1.4: base directory, null = the home. */
  baseDir: string | null;
  /** spec §2 Variables: session variables. */
  vars: Map<string, string>;
  pageShortcuts: Map<string, ShortcutValue>;
  valueShortcuts: Map<string, ShortcutValue>;
  /** Per-feature state (edit read records, undo, shell, …) keyed by feature name. */
  ext: Map<string, unknown>;
  /** Called when the session ends (DELETE /sessions, agent deletion, shutdown). */
  disposers: Array<() => void | Promise<void>>;
  /** Aborted when the session ends; created on first use (sessionSignal), so idle topics carry none. */
  controller: AbortController | null;
}

/** A fresh, empty session for a topic. */
export function newSession(agentId: string, ref: TopicRef, now: number): SessionState {
  return {
    agentId, ref, createdAt: now, doc: null, history: [], baseDir: null,
    vars: new SessionVars(), pageShortcuts: new Map(), valueShortcuts: new Map(), ext: new Map(), disposers: [], controller: null,
  };
}

/**
 * The signal of a session: aborted when the session ends, so a command running in it is interrupted
 * (behaviour.md §1.3: "DELETE /sessions on an executing topic kills the running command").
 */
export function sessionSignal(s: SessionState): AbortSignal {
  s.controller ??= new AbortController();
  return s.controller.signal;
}

/** head.meta of spec §2 for a session (hubs always null: behaviour.md §1.5). */
export function sessionMeta(s: SessionState): DocMeta | null {
  if (s.ref.type === 'hub' || !s.doc) return null;
  return { uri: s.doc.uri, title: s.doc.title, current_block: s.doc.currentBlock };
}
