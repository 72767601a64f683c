import { content, fail, type CommandResult } from '../../domain/result.js';
import { renderHub } from '../hubs.js';
import { HUB_ONLY_MESSAGE } from '../registry.js';
import type { Command, CommandContext } from '../types.js';
import { isResult, loadSource } from './load.js';
import { listingLines, listingSystem } from './ls.js';
import { clearDocument, docData, historySource, setCurrent, type DocData, type DocSource, type HistoryStep } from './state.js';
import { notInstalled, resolveTarget } from './targets.js';
import { anchorText, documentOutput, envCheck, openedName, withDefault } from './view.js';

const OPEN_USAGE = 'Usage: /open <file|folder|URL|app:NAME|@shortcut|#anchor>';
/** behaviour.md §2.3: commands that need a current document. */
export const noDocument = () => fail('INVALID_TARGET', 'No document open.');

/**
 * Load, env-check and make current with the history step (the read of a local file recorded with it).
 * Returns the data or a failure (nothing changed).
 */
export async function loadAndSet(ctx: CommandContext, source: DocSource, anchor: string | null, step: HistoryStep): Promise<{ data: DocData; anchorText?: string } | CommandResult> {
  const data = await loadSource(ctx, source);
  if (isResult(data)) return data;
  const env = envCheck(ctx, data);
  if (env) return env;
  let text: string | undefined;
  if (anchor !== null) {
    const a = anchorText(data, anchor);
    if ('ok' in a) return a;
    text = a.text;
  }
  setCurrent(ctx, data, anchor !== null ? `#${anchor}` : null, step);
  return { data, ...(text !== undefined ? { anchorText: text } : {}) };
}

/** Output of a loaded document: the anchor alone, or the whole document with hints and default action. */
async function output(ctx: CommandContext, verb: string, r: { data: DocData; anchorText?: string }, anchor: string | null): Promise<CommandResult> {
  // Only `Opened` names the package file; `Back to` and `Refreshed` print the display (behaviour.md §3.4).
  const name = (a: string | null) => (verb === 'Opened' ? openedName(r.data, a) : r.data.loaded.display + (a ? `#${a}` : ''));
  if (anchor !== null && r.anchorText !== undefined) return content(`${verb} ${name(anchor)}`, r.anchorText);
  return withDefault(ctx, r.data, documentOutput(`${verb} ${name(null)}`, r.data));
}

/** /open of a source: load, check, push history, show (behaviour.md §3.2, §3.4). */
async function openSource(ctx: CommandContext, source: DocSource, anchor: string | null): Promise<CommandResult> {
  const r = await loadAndSet(ctx, source, anchor, 'push');
  if (isResult(r)) return r;
  return output(ctx, 'Opened', r, anchor);
}

/** `/open [<target>]` (behaviour.md §3.2). */
export const openCommand: Command = {
  name: 'open',
  async run(ctx) {
    const { session } = ctx;
    const arg = ctx.args.trim();
    if (session.ref.type === 'hub') return arg === '' ? renderHub(ctx) : fail('INVALID_TARGET', HUB_ONLY_MESSAGE);
    if (arg === '') {
      if (session.ref.type === 'app') {
        if (!ctx.services.packages.get(ctx.agent.id, session.ref.name)) return notInstalled(session.ref.name);
        return openSource(ctx, { kind: 'package', name: session.ref.name, page: null }, null);
      }
      return session.doc ? refreshCommand.run(ctx) : fail('INVALID_ARGS', OPEN_USAGE);
    }
    const r = resolveTarget(ctx, arg);
    if (r.type === 'error') return r.result;
    if (r.type === 'folder') {
      ctx.change({ type: 'session.based', baseDir: r.path });
      return content(listingSystem(r.display), listingLines(r.path, false));
    }
    if (r.type === 'anchor') {
      const cur = docData(session);
      if (!cur || !session.doc) return noDocument();
      const a = anchorText(cur, r.anchor);
      if ('ok' in a) return a;
      ctx.change({ type: 'session.navigated', block: `#${r.anchor}` });
      return content(`Opened ${openedName(cur, r.anchor)}`, a.text);
    }
    return openSource(ctx, r.source, r.anchor);
  },
};

/** `/refresh` (behaviour.md §2.3): reload, keep the anchor, re-run the default action; no history change. */
export const refreshCommand: Command = {
  name: 'refresh',
  async run(ctx) {
    if (ctx.session.ref.type === 'hub') return renderHub(ctx);
    const cur = docData(ctx.session);
    if (!cur || !ctx.session.doc) return noDocument();
    const keep = ctx.session.doc.currentBlock;
    const r = await loadAndSet(ctx, cur.source, null, 'keep');
    if (isResult(r)) return r;
    const id = keep?.slice(1);
    if (id !== undefined && !('ok' in anchorText(r.data, id)) && ctx.session.doc) ctx.change({ type: 'session.navigated', block: keep });
    return output(ctx, 'Refreshed', r, null);
  },
};

/** `/back` (behaviour.md §2.3): load the newest history entry, which leaves the history; a failed load keeps it. */
export const backCommand: Command = {
  name: 'back',
  async run(ctx) {
    const { session } = ctx;
    if (session.ref.type === 'hub') return fail('INVALID_TARGET', HUB_ONLY_MESSAGE);
    const entry = session.history.at(-1);
    if (!entry) return fail('INVALID_TARGET', 'No previous document in this topic.');
    const anchor = entry.anchor ? entry.anchor.replace(/^#/, '') : null;
    let r = await loadAndSet(ctx, historySource(entry), anchor, 'pop');
    // An anchor that no longer exists: go back to the whole document rather than fail.
    if (isResult(r) && anchor !== null && r.code === 'NOT_FOUND' && r.body.includes('Anchor not found')) r = await loadAndSet(ctx, historySource(entry), null, 'pop');
    if (isResult(r)) return r;
    return output(ctx, 'Back to', r, r.anchorText !== undefined ? anchor : null);
  },
};


/** `/close` (behaviour.md §2.3): clears document, anchor, history, page shortcuts and base directory. */
export const closeCommand: Command = {
  name: 'close',
  async run(ctx) {
    const { session } = ctx;
    const bash = session.ref.type === 'bash' ? ctx.services.bash : undefined;
    const shellEnded = bash ? await bash.closeShell(ctx) : false;
    if (!session.doc || session.ref.type === 'hub') {
      return shellEnded ? { ok: true, code: null, body: `Shell of ${session.ref.topic} ended` } : noDocument();
    }
    const display = clearDocument(ctx);
    return { ok: true, code: null, body: shellEnded ? `Closed ${display}; shell ended` : `Closed ${display}` };
  },
};
