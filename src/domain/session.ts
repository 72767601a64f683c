import type { TopicRef } from './topic.js';
import type { DocMeta } from './result.js';
import { HISTORY_MAX } from './limits.js';

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
export type ShortcutValue = string | readonly string[];

/**
 * One entry of a topic's document history (behaviour.md §3.6), with what the documents layer needs
 * to load it again (`source`, plain data owned by that layer).
 */
export interface HistoryRef {
  readonly uri: string;
  readonly anchor: string | null;
  readonly source: unknown;
}

/**
 * An undo record of one file (behaviour.md §2.5). The content before the edit is not held here: it
 * is a file in the agent's state folder (`copy`), so a session holds references, never file bytes.
 */
export interface UndoRef {
  /** Real path of the edited file. */
  readonly path: string;
  readonly display: string;
  /** The command that made the edit (`/write`, `/append`, `/replace`). */
  readonly command: string;
  /** sha256 of the content the edit left. */
  readonly afterHash: string;
  /** The copy of the content before the edit; null when the edit created the file. */
  readonly copy: string | null;
}

/** The last action result (spec §4.12 item 5: `{Response}`), as plain data. */
export interface ActionResponse {
  /** The action's id. */
  readonly action: string;
  readonly kind: 'http' | 'cli';
  readonly status: number;
  readonly body: string;
  /** The parsed JSON of the response, if it parsed. */
  readonly json?: unknown;
  readonly stdout?: string;
  readonly stderr?: string;
  readonly exitCode?: number;
}

/**
 * Per-topic session state (spec §2 Topic; behaviour.md §1.3): data only, memory only (it does not
 * survive a restart). It lives in the topic actor's context and changes only by `SessionChange`
 * events the topic applies (architecture.md "One read model"); a command reads it and says what it
 * changed. Every field is read-only, every collection a new value after each change, so a session
 * handed out is never written afterwards. Effect handles of a session (its abort signal) live with
 * the actors, not here.
 */
export interface SessionState {
  /** Unique per session in this process: a renewed session has a new id, so late changes of the old one are dropped. */
  readonly id: number;
  readonly agentId: string;
  readonly ref: TopicRef;
  readonly createdAt: number;
  readonly doc: OpenDocument | null;
  /** behaviour.md §3.6: previous documents, newest last (at most HISTORY_MAX). */
  readonly history: readonly HistoryRef[];
  /** behaviour.md §1.4: base directory, null = the home. */
  readonly baseDir: string | null;
  /** spec §2 Variables: session variables. A new map after every change, so derived values can be keyed by it. */
  readonly vars: ReadonlyMap<string, string>;
  readonly pageShortcuts: ReadonlyMap<string, ShortcutValue>;
  readonly valueShortcuts: ReadonlyMap<string, ShortcutValue>;
  /** behaviour.md §2.5 read records: real path → sha256 of the content last read or written in this topic. */
  readonly reads: ReadonlyMap<string, string>;
  /** behaviour.md §2.5 undo records, one per file, the most recent edit last. */
  readonly undo: readonly UndoRef[];
  /** spec §4.12 item 5: the last action result, null before the first action. */
  readonly lastResponse: ActionResponse | null;
}

/**
 * What a command changed in its session (behaviour.md §13.7 names the events). The topic applies each
 * with `applySessionChange` and emits it; readers (inspector, traces) see these, never a mutation.
 * Each is plain data, so a session can be rebuilt from its changes.
 */
export type SessionChange =
  | {
    type: 'session.opened'; doc: OpenDocument; pageShortcuts: ReadonlyMap<string, ShortcutValue>; baseDir: string | null;
    /** The document it replaces, pushed to the history (behaviour.md §3.6). */
    push?: HistoryRef;
    /** /back: the newest history entry is the document opened, and leaves the history. */
    pop?: true;
    /** A local file opened: its read record (behaviour.md §2.5). */
    read?: { path: string; hash: string };
  }
  | { type: 'session.navigated'; block: string | null }
  | { type: 'session.based'; baseDir: string | null }
  | { type: 'session.closed' }
  | { type: 'session.set'; scope: 'session'; values: ReadonlyArray<readonly [string, string]> }
  | { type: 'session.cleared'; scope: 'session'; names: readonly string[] }
  | { type: 'session.shortcuts'; valueShortcuts: ReadonlyMap<string, ShortcutValue> }
  /** A file read in this topic (behaviour.md §2.5 read records). */
  | { type: 'session.read'; path: string; hash: string }
  /** A file written: its read record is the new content; its undo record replaced, or dropped when `undo` is null. */
  | { type: 'session.edited'; path: string; hash: string; undo: UndoRef | null }
  /** An undo record used: dropped; the read record is the restored content, or none when the file was removed. */
  | { type: 'session.undone'; path: string; hash: string | null }
  /** An action answered (spec §4.12 item 5). */
  | { type: 'session.responded'; response: ActionResponse };

/** A change as the topic actor emits it, once applied (its readers: inspection, traces). */
export type SessionEvent = SessionChange & { agentId: string; topic: string; sessionId: number; at: number };

let sessions = 0;

/** A fresh, empty session for a topic. */
export function newSession(agentId: string, ref: TopicRef, now: number): SessionState {
  return {
    id: ++sessions, agentId, ref, createdAt: now, doc: null, history: [], baseDir: null,
    vars: new Map(), pageShortcuts: new Map(), valueShortcuts: new Map(), reads: new Map(), undo: [], lastResponse: null,
  };
}

/** The session after one change (pure: the input is not modified). */
export function applySessionChange(s: SessionState, c: SessionChange): SessionState {
  switch (c.type) {
    case 'session.opened':
      return {
        ...s, doc: c.doc, pageShortcuts: c.pageShortcuts, baseDir: c.baseDir, history: nextHistory(s.history, c),
        ...(c.read ? { reads: withEntry(s.reads, c.read.path, c.read.hash) } : {}),
      };
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
    default:
      return applyFileChange(s, c);
  }
}

/** The history after an open: the replaced document pushed (oldest dropped past the limit), or the newest popped. */
function nextHistory(h: readonly HistoryRef[], c: Extract<SessionChange, { type: 'session.opened' }>): readonly HistoryRef[] {
  if (c.pop) return h.slice(0, -1);
  if (!c.push) return h;
  const next = [...h, c.push];
  return next.length > HISTORY_MAX ? next.slice(next.length - HISTORY_MAX) : next;
}

/** The file and action changes: read records, undo records, the last response. */
function applyFileChange(s: SessionState, c: Extract<SessionChange, { type: 'session.read' | 'session.edited' | 'session.undone' | 'session.responded' }>): SessionState {
  switch (c.type) {
    case 'session.read':
      return { ...s, reads: withEntry(s.reads, c.path, c.hash) };
    case 'session.edited': {
      const undo = s.undo.filter((u) => u.path !== c.path);
      return { ...s, reads: withEntry(s.reads, c.path, c.hash), undo: c.undo ? [...undo, c.undo] : undo };
    }
    case 'session.undone':
      return { ...s, reads: withEntry(s.reads, c.path, c.hash), undo: s.undo.filter((u) => u.path !== c.path) };
    case 'session.responded':
      return { ...s, lastResponse: c.response };
  }
}

/** A copy of `m` with `key` set to `value`, or removed when `value` is null. */
function withEntry(m: ReadonlyMap<string, string>, key: string, value: string | null): ReadonlyMap<string, string> {
  const next = new Map(m);
  if (value === null) next.delete(key);
  else next.set(key, value);
  return next;
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
