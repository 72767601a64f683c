import { statSync } from 'node:fs';
import { dirname, posix, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PACKAGE_NAME_RE } from '../../domain/ids.js';
import { fail, type CommandResult } from '../../domain/result.js';
import type { SessionState, ShortcutValue } from '../../domain/session.js';
import { displayOf, expandPath, isRefusal, resolveInWorkspace, type PathRefusal } from '../../effects/workspace.js';
import type { CommandContext } from '../types.js';
import { docData, type DocSource, type Location } from './state.js';

/** What a `/open` target names (behaviour.md §3.2). */
export type Resolved =
  | { type: 'anchor'; anchor: string }
  | { type: 'doc'; source: DocSource; anchor: string | null }
  | { type: 'folder'; path: string; display: string }
  | { type: 'error'; result: CommandResult };

const SCHEME_RE = /^[A-Za-z][A-Za-z0-9+.-]*:/;
const LOOPBACK = ['127.0.0.1', 'localhost', '[::1]'];

/** behaviour.md §3.2 step 5: plain http only for loopback hosts. */
export const PLAIN_HTTP_MESSAGE = 'Plain http:// is allowed only for loopback hosts; use https://';

/** The step-5 rule for one URL: a refusal message or null. */
export function httpRule(url: URL): string | null {
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:') return LOOPBACK.includes(url.hostname) ? null : PLAIN_HTTP_MESSAGE;
  return `Unsupported target: ${url.href}`;
}

/** `ERROR(NOT_FOUND): App '<name>' is not installed.` (behaviour.md §3.2 step 1). */
export function notInstalled(name: string): CommandResult {
  return fail('NOT_FOUND', `App '${name}' is not installed.`, { recovery: `/install <source> --app --as ${name}` });
}

/** `ERROR(FORBIDDEN): Path outside the workspace: <display>` (behaviour.md §1.4). */
export function forbidden(display: string): CommandResult {
  return fail('FORBIDDEN', `Path outside the workspace: ${display}`);
}

/** A refused path as a command failure: FORBIDDEN outside the workspace, else INVALID_PATH. */
export function refusalResult(r: PathRefusal): CommandResult {
  return fail(r.refused === 'outside' ? 'FORBIDDEN' : 'INVALID_PATH', r.message);
}

/** The nearest folder above `abs` that exists (a missing file's parents may be missing too). */
export function nearestFolder(abs: string): string {
  let d = dirname(abs);
  for (; d !== dirname(d); d = dirname(d)) {
    try {
      if (statSync(d).isDirectory()) return d;
    } catch {
      // Missing (or unreadable): look one level up.
    }
  }
  return d;
}

/**
 * `ERROR(NOT_FOUND): File not found: <display>` with the `/ls <folder>` recovery naming the nearest
 * existing folder above it, so the recovery itself never fails (behaviour.md §2.5).
 */
export function fileNotFound(abs: string, home: string): CommandResult {
  return fail('NOT_FOUND', `File not found: ${displayOf(abs, home)}`, { recovery: `/ls ${displayOf(nearestFolder(abs), home)}` });
}

/** A shortcut value: value shortcuts, page shortcuts, then (beyond spec) a menu entry with that id in exactly one menu. */
export function lookupShortcut(s: SessionState, id: string): ShortcutValue | undefined {
  const v = s.valueShortcuts.get(id) ?? s.pageShortcuts.get(id);
  if (v !== undefined || id.includes('.')) return v;
  const hits = [...s.pageShortcuts.entries()].filter(([k]) => k.endsWith(`.${id}`) && k.indexOf('.') === k.length - id.length - 1);
  return hits.length === 1 ? hits[0][1] : undefined;
}

/** Resolve a link of a document against where the document is (page shortcuts, menus, requirements). */
export function resolveHref(loc: Location, href: string): string {
  if (SCHEME_RE.test(href) || href.startsWith('~')) return href;
  const hash = href.indexOf('#');
  const path = hash < 0 ? href : href.slice(0, hash);
  const frag = hash < 0 ? '' : href.slice(hash);
  if (path === '') return loc.self + frag;
  if (loc.kind === 'file') return resolve(loc.dir, path) + frag;
  if (loc.kind === 'url') return new URL(href, loc.base).href;
  const joined = posix.normalize(posix.join(posix.dirname(loc.page), path));
  if (loc.pkg) return (joined === 'string.md' ? `app:${loc.pkg}` : `app:${loc.pkg}/${joined}`) + frag;
  return (joined === 'string.md' ? loc.url : `${loc.url}#/${joined}`) + frag;
}

/**
 * Resolve a `/open` (or `/source`) target per behaviour.md §3.2 steps 2–10. Local targets pass
 * the workspace policy and must exist.
 */
export function resolveTarget(ctx: CommandContext, raw: string): Resolved {
  const t = raw.trim();
  if (t.startsWith('#')) return { type: 'anchor', anchor: t.slice(1) };
  if (t.startsWith('@')) {
    const id = t.slice(1);
    const v = lookupShortcut(ctx.session, id);
    if (v === undefined) return { type: 'error', result: fail('NOT_FOUND', `Unknown shortcut: @${id}`) };
    if (typeof v !== 'string') return { type: 'error', result: fail('INVALID_TARGET', `@${id} holds a value, not a link: (${v.join(', ')})`) };
    return resolveLink(ctx, v);
  }
  return resolveLink(ctx, t);
}

/** behaviour.md §3.2 steps 4–10. */
function resolveLink(ctx: CommandContext, t: string): Resolved {
  const hash = t.indexOf('#');
  const path = hash < 0 ? t : t.slice(0, hash);
  let frag: string | null = hash < 0 ? null : t.slice(hash + 1);
  if (/^https?:\/\//i.test(path)) {
    let url: URL;
    try {
      url = new URL(path);
    } catch {
      // Not parseable as a URL: the generic unsupported-target answer.
      return { type: 'error', result: fail('INVALID_TARGET', `Unsupported target: ${t}`) };
    }
    const refused = httpRule(url);
    if (refused) return { type: 'error', result: fail('INVALID_TARGET', refused) };
    let page: string | null = null;
    if (frag !== null && frag.startsWith('/')) {
      const h = frag.indexOf('#');
      page = (h < 0 ? frag : frag.slice(0, h)).slice(1);
      frag = h < 0 ? null : frag.slice(h + 1);
    }
    return { type: 'doc', source: { kind: 'url', url: url.href, page: page === 'string.md' ? null : page }, anchor: frag };
  }
  const app = /^app:([^:/]+)(?::[^/]*)?(?:\/(.*))?$/.exec(path);
  if (app) {
    if (!PACKAGE_NAME_RE.test(app[1]) || !ctx.services.packages.get(ctx.agent.id, app[1])) return { type: 'error', result: notInstalled(app[1]) };
    const page = app[2] && app[2] !== 'string.md' ? posix.normalize(app[2]) : null;
    return { type: 'doc', source: { kind: 'package', name: app[1], page }, anchor: frag };
  }
  if (PACKAGE_NAME_RE.test(path) && ctx.services.packages.get(ctx.agent.id, path)) {
    return { type: 'doc', source: { kind: 'package', name: path, page: null }, anchor: frag };
  }
  if (/^file:\/\//i.test(path)) {
    try {
      return local(ctx, fileURLToPath(path), frag);
    } catch {
      // fileURLToPath refuses non-local hosts and malformed URIs.
      return { type: 'error', result: fail('INVALID_TARGET', `Unsupported target: ${t}`) };
    }
  }
  if (path === '~' || path.startsWith('~/') || path.startsWith('/')) return local(ctx, path, frag);
  if (SCHEME_RE.test(path)) return { type: 'error', result: fail('INVALID_TARGET', `Unsupported target: ${t}`) };
  const cur = docData(ctx.session);
  if (cur && cur.loaded.origin !== 'local' && cur.location.kind !== 'file') return resolveLink(ctx, resolveHref(cur.location, t));
  return local(ctx, path, frag);
}

/** A local target under the workspace policy (behaviour.md §1.4, §3.2). */
function local(ctx: CommandContext, input: string, anchor: string | null): Resolved {
  const { agent, session } = ctx;
  const ws = resolveInWorkspace(agent, session.baseDir, input);
  if (isRefusal(ws)) return { type: 'error', result: refusalResult(ws) };
  let isDir: boolean;
  try {
    isDir = statSync(ws.abs).isDirectory();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { type: 'error', result: fileNotFound(expandPath(input, agent.home, session.baseDir ?? agent.home), agent.home) };
    throw err;
  }
  if (isDir) return { type: 'folder', path: ws.abs, display: ws.display };
  return { type: 'doc', source: { kind: 'file', path: ws.abs, display: ws.display }, anchor };
}
