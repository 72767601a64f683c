import { HISTORY_MAX } from '../../domain/limits.js';
import type { HistoryRef, OpenDocument, SessionState } from '../../domain/session.js';
import type { CommandContext } from '../types.js';
import type { DocWarning } from '../../sfmd/types.js';
import type { Manifest } from '../../sfmd/manifest.js';
import type { LoadedDocument } from '../docContract.js';

/** Where a document is loaded from, enough to load it again (/refresh, /back). */
export type DocSource =
  | { kind: 'file'; path: string; display: string }
  | { kind: 'url'; url: string; page: string | null }
  | { kind: 'package'; name: string; page: string | null };

/** What relative targets of a document resolve against (behaviour.md §3.2 step 9, §3.3). */
export type Location = { self: string } & (
  | { kind: 'file'; dir: string }
  | { kind: 'url'; base: string }
  | { kind: 'manifest'; url: string; page: string; manifest: Manifest; pkg?: string });

/** One menu of a `[!nav:<menu>]` directive with its entries resolved to targets (behaviour.md §3.8). */
export interface Menu {
  name: string;
  entries: Array<{ id: string; label: string; target: string }>;
}

/** The documents layer's part of `session.doc.data`. */
export interface DocData {
  loaded: LoadedDocument;
  source: DocSource;
  location: Location;
  /** The text as received (HTML before conversion) for /source. */
  raw: string;
  html: boolean;
  /** Packages: the file path display or URL shown in parentheses (behaviour.md §3.4). */
  pathDisplay?: string;
  installHint?: string;
  menus: Menu[];
  /** Page shortcuts of the document resolved to targets (first one per id). */
  pageTargets: Array<[string, string]>;
  /** Local files: sha256 of the bytes loaded. */
  fileHash?: string;
  /** Parser warnings plus load warnings (nav files), in line order. */
  warnings: DocWarning[];
}

/** A history entry (behaviour.md §3.6) with what is needed to load it again. */
export interface HistoryEntry {
  uri: string;
  anchor: string | null;
  source: DocSource;
}

/** An undo record of one file (behaviour.md §2.5). */
export interface UndoRecord {
  command: string;
  /** Content before the edit, or null when the edit created the file; undefined when too large to keep. */
  before: Buffer | null | undefined;
  /** sha256 of the content the edit left. */
  afterHash: string;
  display: string;
}

/** Per-topic state of the documents feature kept in `session.ext`. */
export interface DocsTopicState {
  history: HistoryEntry[];
  /** Read records: real path → sha256 of the content last read or written here. */
  reads: Map<string, string>;
  undo: Map<string, UndoRecord>;
  /** Paths with undo records, most recent last. */
  undoOrder: string[];
}

const EXT_KEY = 'documents';

/** The documents state of a session, created on first use. */
export function topicState(s: SessionState): DocsTopicState {
  let st = s.ext.get(EXT_KEY) as DocsTopicState | undefined;
  if (!st) {
    st = { history: [], reads: new Map(), undo: new Map(), undoOrder: [] };
    s.ext.set(EXT_KEY, st);
  }
  return st;
}

/** The documents data of the session's current document, if any. */
export function docData(s: SessionState): DocData | undefined {
  const d = s.doc?.data as DocData | undefined;
  return d && typeof d === 'object' && 'loaded' in d ? d : undefined;
}

/** Push the current document to this feature's history (behaviour.md §3.6: at most 50, oldest dropped). */
export function pushHistory(s: SessionState): void {
  const cur = docData(s);
  if (!s.doc || !cur) return;
  const st = topicState(s);
  st.history.push({ uri: s.doc.uri, anchor: s.doc.currentBlock, source: cur.source });
  while (st.history.length > HISTORY_MAX) st.history.shift();
}

/** The (uri, anchor) form of this feature's history, as the session shows it to readers. */
function historyRefs(s: SessionState): HistoryRef[] {
  return topicState(s).history.map((h) => ({ uri: h.uri, anchor: h.anchor }));
}

/** Make `data` the current document (anchor `block` or null) with its page shortcuts: one `session.opened` change. */
export function setCurrent(ctx: Pick<CommandContext, 'session' | 'change'>, data: DocData, block: string | null): void {
  const s = ctx.session;
  const doc: OpenDocument = { uri: data.loaded.uri, title: data.loaded.doc.title, currentBlock: block, display: data.loaded.display, data };
  const baseDir = data.loaded.origin === 'local' && data.location.kind === 'file' ? data.location.dir : s.baseDir;
  ctx.change({ type: 'session.opened', doc, pageShortcuts: new Map(pageShortcutTargets(data)), history: historyRefs(s), baseDir });
}

/**
 * Clear the document as `/close` does (behaviour.md §2.3): document, anchor, history, page shortcuts
 * and base directory; session variables and value shortcuts stay. Returns the display it had.
 */
export function clearDocument(ctx: Pick<CommandContext, 'session' | 'change'>): string | null {
  const display = ctx.session.doc?.display ?? null;
  topicState(ctx.session).history = [];
  ctx.change({ type: 'session.closed' });
  return display;
}

/** Page shortcut and menu entry targets of a document (behaviour.md §3.7). */
export function pageShortcutTargets(data: DocData): Map<string, string> {
  const out = new Map<string, string>(data.pageTargets);
  for (const m of data.menus) for (const e of m.entries) out.set(`${m.name}.${e.id}`, e.target);
  return out;
}
