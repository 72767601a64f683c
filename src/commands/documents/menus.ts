import { dirname } from 'node:path';
import type { CommandResult } from '../../domain/result.js';
import { isRefusal, resolveInWorkspace } from '../../effects/workspace.js';
import { parseNavFile } from '../../sfmd/links.js';
import type { Directive, DocWarning } from '../../sfmd/types.js';
import type { CommandContext } from '../types.js';
import { fetchRemote, jsonDocument, readLocalText } from './fetch.js';
import type { Location, Menu } from './state.js';
import { resolveHref } from './targets.js';

/** The message of a failure result without its `ERROR(<CODE>): ` prefix (a nav-file warning reason). */
function reasonOf(r: CommandResult): string {
  return r.body.split('\n')[0].replace(/^ERROR\([A-Z_0-9]+\): /, '');
}

type Read = { text: string; loc: Location } | { reason: string };

/** Read a file named relative to a document, local or remote like the document (behaviour.md §3.8). */
async function readRelated(ctx: CommandContext, loc: Location, path: string): Promise<Read> {
  const target = resolveHref(loc, path).replace(/#(?!\/).*$/, '');
  const inManifest = loc.kind === 'manifest' && (target.startsWith('app:') || target === loc.url || target.startsWith(`${loc.url}#/`));
  if (loc.kind === 'manifest' && inManifest) {
    const page = target.startsWith('app:') ? target.replace(/^app:[^/]+\/?/, '') || 'string.md' : target === loc.url ? 'string.md' : target.slice(loc.url.length + 2);
    const entry = loc.manifest.files.find((f) => f.path === page);
    if (!entry) return { reason: `not in the package manifest` };
    const self = loc.pkg ? `app:${loc.pkg}/${page}` : `${loc.url}#/${page}`;
    const next: Location = { ...loc, page, self };
    if (entry.content !== undefined) return { text: entry.content, loc: next };
    const r = await fetchRemote(ctx, entry.url as string);
    if ('ok' in r) return { reason: reasonOf(r) };
    return { text: r.kind === 'json' ? jsonDocument(r.value) : r.text, loc: next };
  }
  if (/^https?:/i.test(target)) {
    const r = await fetchRemote(ctx, target);
    if ('ok' in r) return { reason: reasonOf(r) };
    return { text: r.kind === 'json' ? jsonDocument(r.value) : r.text, loc: { kind: 'url', base: r.url, self: target } };
  }
  if (!target.startsWith('/') && !target.startsWith('~')) return { reason: 'unsupported location' };
  const ws = resolveInWorkspace(ctx.agent, null, target);
  if (isRefusal(ws)) return { reason: ws.refused === 'outside' ? 'outside the workspace' : ws.message };
  try {
    const r = readLocalText(ws.abs, ws.display);
    if ('ok' in r) return { reason: reasonOf(r) };
    return { text: r.text, loc: { kind: 'file', dir: dirname(ws.abs), self: ws.abs } };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { reason: code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : code === 'EACCES' ? 'permission denied' : (err as Error).message };
  }
}

/** The menus of a document's `[!nav:…]` directives; unreadable nav files warn and give empty menus. */
export async function readMenus(ctx: CommandContext, loc: Location, directives: Directive[]): Promise<{ menus: Menu[]; warnings: DocWarning[] }> {
  const menus: Menu[] = [];
  const warnings: DocWarning[] = [];
  for (const d of directives.filter((x) => x.name === 'nav')) {
    const name = d.arg as string;
    if (menus.some((m) => m.name === name)) continue;
    const r = await readRelated(ctx, loc, d.path);
    if ('reason' in r) {
      warnings.push({ line: d.line, text: `cannot read nav file ${d.path}: ${r.reason}` });
      menus.push({ name, entries: [] });
      continue;
    }
    menus.push({ name, entries: parseNavFile(r.text).map((e) => ({ id: e.id, label: e.label, target: resolveHref(r.loc, e.href) })) });
  }
  return { menus, warnings };
}
