import { statSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { fail, type CommandResult } from '../../domain/result.js';
import { displayOf, isInside, isRefusal, resolveInWorkspace } from '../../effects/workspace.js';
import { isManifest, validateManifest, type Manifest } from '../../sfmd/manifest.js';
import type { DocOrigin, LoadedDocument } from '../docContract.js';
import type { CommandContext } from '../types.js';
import { fetchRemote, jsonDocument, readLocalText, type Remote } from './fetch.js';
import { readMenus } from './menus.js';
import { parseOffLoop } from './parseCache.js';
import type { DocData, DocSource, Location } from './state.js';
import { fileNotFound, forbidden, notInstalled, refusalResult, resolveHref } from './targets.js';

/** A document's text and identity before parsing. */
export interface Fetched {
  text: string;
  raw: string;
  html: boolean;
  origin: DocOrigin;
  uri: string;
  display: string;
  pathDisplay?: string;
  path?: string;
  dir?: string;
  packageName?: string;
  location: Location;
  installHint?: string;
  /** Local files: sha256 of the bytes read (the topic's read record, behaviour.md §2.5). */
  fileHash?: string;
}

const isResult = (x: unknown): x is CommandResult => x !== null && typeof x === 'object' && 'ok' in x && 'body' in x;

/** The installed package (local or in place) whose folder holds `abs`, if any. */
function packageOfPath(ctx: CommandContext, abs: string): { name: string; dir: string; page: string | null } | null {
  for (const rec of ctx.services.packages.list(ctx.agent.id)) {
    if (rec.mode === 'link' || !rec.uri.startsWith('file:')) continue;
    const root = fileURLToPath(rec.uri);
    if (abs === root) return { name: rec.name, dir: dirname(root), page: null };
    // A single-file in-place package owns only its file, not the folder around it.
    if (basename(root) === 'string.md' && isInside(abs, dirname(root))) return { name: rec.name, dir: dirname(root), page: abs.slice(dirname(root).length + 1) };
  }
  return null;
}

/** A local file, as itself or as a page of the package that holds it. */
function localFile(ctx: CommandContext, abs: string, display: string): Fetched | CommandResult {
  const home = ctx.agent.home;
  const r = readLocalText(abs, display);
  if (isResult(r)) return r;
  const base: Fetched = {
    text: r.text, raw: r.text, html: false, origin: 'local', uri: pathToFileURL(abs).href, display, path: abs, dir: dirname(abs), fileHash: r.hash,
    location: { kind: 'file', dir: dirname(abs), self: abs },
  };
  const pkg = packageOfPath(ctx, abs);
  if (!pkg) return base;
  return { ...base, display: pkg.page ? `app:${pkg.name}/${pkg.page}` : `app:${pkg.name}`, pathDisplay: displayOf(abs, home), dir: pkg.dir, packageName: pkg.name };
}

/** A page of a (validated) manifest (behaviour.md §3.3). */
async function manifestPage(ctx: CommandContext, o: { url: string; manifest: Manifest; page: string; pkg?: string }): Promise<Fetched | CommandResult> {
  const entry = o.manifest.files.find((f) => f.path === o.page);
  if (!entry) return fail('NOT_FOUND', `Not in the package manifest: ${o.page}`);
  let text = entry.content;
  let html = false;
  if (text === undefined) {
    const r = await fetchRemote(ctx, entry.url as string);
    if (isResult(r)) return r;
    text = r.kind === 'json' ? jsonDocument(r.value) : r.text;
    html = r.kind === 'html';
  }
  const root = o.page === 'string.md';
  const uri = root ? o.url : `${o.url}#/${o.page}`;
  const self = o.pkg ? (root ? `app:${o.pkg}` : `app:${o.pkg}/${o.page}`) : uri;
  return {
    text, raw: text, html, origin: 'manifest', uri, display: o.pkg ? self : uri,
    ...(o.pkg ? { pathDisplay: uri, packageName: o.pkg } : {}),
    ...(!o.pkg && root && o.manifest.installHint ? { installHint: o.manifest.installHint } : {}),
    location: { kind: 'manifest', url: o.url, page: o.page, manifest: o.manifest, self, ...(o.pkg ? { pkg: o.pkg } : {}) },
  };
}

/** A remote document or manifest page (behaviour.md §3.3). */
async function remote(ctx: CommandContext, url: string, page: string | null, pkg?: string): Promise<Fetched | CommandResult> {
  const r: Remote | CommandResult = await fetchRemote(ctx, url);
  if (isResult(r)) return r;
  if (r.kind === 'json' && isManifest(r.value)) {
    const v = validateManifest(r.value, url);
    if (!v.ok) return fail('INVALID_TARGET', `Invalid manifest at ${url}: ${v.reason}`);
    return manifestPage(ctx, { url, manifest: v.manifest, page: page ?? 'string.md', pkg });
  }
  if (page !== null && pkg) return remote(ctx, new URL(page, r.url).href, null);
  const text = r.kind === 'json' ? jsonDocument(r.value) : r.text;
  return {
    text, raw: r.raw, html: r.kind === 'html', origin: pkg ? 'manifest' : 'web', uri: url, display: pkg ? `app:${pkg}` : url,
    ...(pkg ? { pathDisplay: url, packageName: pkg } : {}),
    location: { kind: 'url', base: r.url, self: pkg ? `app:${pkg}` : url },
  };
}

/** An installed package's root or page (behaviour.md §3.2 step 6; §7.6 modes). */
async function packageDoc(ctx: CommandContext, name: string, page: string | null): Promise<Fetched | CommandResult> {
  // A commit of this agent's packages in progress finishes first (behaviour.md §7.6: opens wait).
  await ctx.services.packages.whenIdle?.(ctx.agent.id);
  const rec = ctx.services.packages.get(ctx.agent.id, name);
  if (!rec) return notInstalled(name);
  if (rec.mode === 'link') return remote(ctx, rec.uri, page, name);
  const root = fileURLToPath(rec.uri);
  const file = page ? resolve(dirname(root), page) : root;
  if (!isInside(file, dirname(root))) return fileNotFound(file, ctx.agent.home);
  const ws = resolveInWorkspace(ctx.agent, null, file);
  if (isRefusal(ws)) return refusalResult(ws);
  try {
    if (statSync(ws.abs).isDirectory()) return fail('INVALID_PATH', `Is a directory: ${ws.display}`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return fileNotFound(file, ctx.agent.home);
    throw err;
  }
  const f = localFile(ctx, ws.abs, ws.display);
  if (isResult(f)) return f;
  return { ...f, display: page ? `app:${name}/${page}` : `app:${name}`, pathDisplay: ws.display, packageName: name, dir: dirname(root) };
}

/** Get a source's text and identity (no parsing, no env check). */
export async function fetchSource(ctx: CommandContext, source: DocSource): Promise<Fetched | CommandResult> {
  if (source.kind === 'file') {
    // Checked again on every load: /refresh and /back must not follow a link swapped in since, nor a path
    // that left the workspace when allowed paths changed.
    const ws = resolveInWorkspace(ctx.agent, null, source.path);
    if (isRefusal(ws)) return ws.refused === 'outside' ? forbidden(source.display) : refusalResult(ws);
    try {
      return localFile(ctx, ws.abs, source.display);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return fileNotFound(source.path, ctx.agent.home);
      if (code === 'EISDIR') return fail('INVALID_PATH', `Is a directory: ${source.display}`);
      throw err;
    }
  }
  if (source.kind === 'url') return remote(ctx, source.url, source.page);
  return packageDoc(ctx, source.name, source.page);
}

/** Parse a fetched document and collect what loading adds: menus, page shortcut targets, setup page. */
export async function buildDocData(ctx: CommandContext, f: Fetched, source: DocSource): Promise<DocData> {
  const doc = await parseOffLoop(f.text);
  const req = doc.directives.find((d) => d.name === 'requirements');
  let requirements: string | undefined;
  if (req) {
    const target = resolveHref(f.location, req.path);
    requirements = target.startsWith('/') ? displayOf(target, ctx.agent.home) : target;
  }
  const loaded: LoadedDocument = {
    doc, origin: f.origin, uri: f.uri, display: f.display,
    ...(f.path ? { path: f.path } : {}), ...(f.dir ? { dir: f.dir } : {}),
    ...(f.packageName ? { packageName: f.packageName } : {}), ...(requirements ? { requirements } : {}),
  };
  const menus = await readMenus(ctx, f.location, doc.directives);
  const warnings = [...doc.warnings, ...menus.warnings].sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
  return {
    loaded, source, location: f.location, raw: f.raw, html: f.html, menus: menus.menus, warnings,
    pageTargets: doc.shortcuts.map((s) => [s.id, resolveHref(f.location, s.href)]),
    ...(f.pathDisplay ? { pathDisplay: f.pathDisplay } : {}), ...(f.installHint ? { installHint: f.installHint } : {}),
    ...(f.fileHash ? { fileHash: f.fileHash } : {}),
  };
}

/** Load a source completely (text, parse, menus); the env check is separate (envCheck). */
export async function loadSource(ctx: CommandContext, source: DocSource): Promise<DocData | CommandResult> {
  const f = await fetchSource(ctx, source);
  if (isResult(f)) return f;
  return buildDocData(ctx, f, source);
}

export { isResult };
