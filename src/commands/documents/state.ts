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

/** The documents data of the session's current document, if any. */
export function docData(s: SessionState): DocData | undefined {
  const d = s.doc?.data as DocData | undefined;
  return d && typeof d === 'object' && 'loaded' in d ? d : undefined;
}

/** Where a history entry is loaded from (this layer made it: `source` is a DocSource). */
export function historySource(h: HistoryRef): DocSource {
  return h.source as DocSource;
}

/** How an open changes the history (behaviour.md §3.6): push the document it replaces, pop the entry it goes back to, or neither. */
export type HistoryStep = 'push' | 'pop' | 'keep';

/**
 * Make `data` the current document (anchor `block` or null) with its page shortcuts, the history
 * step and, for a local file, its read record: one `session.opened` change.
 */
export function setCurrent(ctx: Pick<CommandContext, 'session' | 'change'>, data: DocData, block: string | null, step: HistoryStep = 'keep'): void {
  const s = ctx.session;
  const doc: OpenDocument = { uri: data.loaded.uri, title: data.loaded.doc.title, currentBlock: block, display: data.loaded.display, data };
  const baseDir = data.loaded.origin === 'local' && data.location.kind === 'file' ? data.location.dir : s.baseDir;
  const cur = docData(s);
  // A document opened again from itself is not pushed (behaviour.md §3.6).
  const push = step === 'push' && s.doc && cur && s.doc.uri !== data.loaded.uri ? { uri: s.doc.uri, anchor: s.doc.currentBlock, source: cur.source } : undefined;
  ctx.change({
    type: 'session.opened', doc, pageShortcuts: new Map(pageShortcutTargets(data)), baseDir,
    ...(push ? { push } : {}), ...(step === 'pop' ? { pop: true as const } : {}),
    ...(data.fileHash && data.loaded.path ? { read: { path: data.loaded.path, hash: data.fileHash } } : {}),
  });
}

/**
 * Clear the document as `/close` does (behaviour.md §2.3): document, anchor, history, page shortcuts
 * and base directory; session variables and value shortcuts stay. Returns the display it had.
 */
export function clearDocument(ctx: Pick<CommandContext, 'session' | 'change'>): string | null {
  const display = ctx.session.doc?.display ?? null;
  ctx.change({ type: 'session.closed' });
  return display;
}

/** Page shortcut and menu entry targets of a document (behaviour.md §3.7). */
export function pageShortcutTargets(data: DocData): Map<string, string> {
  const out = new Map<string, string>(data.pageTargets);
  for (const m of data.menus) for (const e of m.entries) out.set(`${m.name}.${e.id}`, e.target);
  return out;
}
