import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { derivedName, installError, type GithubSource, type InstallRequest } from '../domain/install.js';
import type { EnvStore } from '../domain/ports.js';
import { displayOf, isInsideReal } from '../effects/workspace.js';
import { fetchFileBuffer, type FetchContext } from '../effects/install/fetch.js';
import { resolveGithub } from '../effects/install/github.js';
import { hasRoot, readRootFile, rootText, walkFolder, type LocalFile } from '../effects/install/local.js';
import { readUrlSource } from '../effects/install/remote.js';
import { packagesDir } from '../effects/install/staging.js';

/**
 * Turn a resolved source into an install plan (behaviour.md §7.2–7.4): the mode, the recorded
 * source, the root document's text (for the name and type of §7.5) and, for local delivery, the
 * files to write. Everything is validated here, before the first package file is fetched or written.
 */

/** One file to write into the staging folder. */
export type PlanFile = { path: string } & ({ data: Buffer } | { url: string } | { local: LocalFile });

/** What an install will do. */
export interface Plan {
  mode: 'local' | 'link' | 'inplace';
  /** The source as recorded in the registry. */
  source: string;
  /** link: the URL; inplace: the file URI. */
  uri?: string;
  /** What the confirmation shows after `→` (link URL, in-place path display). */
  display: string;
  root: string;
  derived: string;
  /** local only: string.md first. */
  files: PlanFile[];
  symlinksSkipped: number;
  /** GitHub token rule for the downloads (§7.3). */
  auth?: FetchContext['auth'];
}

/** What planning needs besides the request. */
export interface PlanDeps {
  env: EnvStore;
  githubApi: string;
  ctx: FetchContext;
}

/** The GitHub token: env store global `$GITHUB_TOKEN`, `$GH_TOKEN`, then the process environment (§7.3). */
function githubToken(env: EnvStore, agentId: string): string | undefined {
  for (const name of ['GITHUB_TOKEN', 'GH_TOKEN']) {
    const v = env.lookup(agentId, {}, name)?.value;
    if (v) return v;
  }
  return process.env.GITHUB_TOKEN || process.env.GH_TOKEN || undefined;
}

/** A local file or folder (§7.2); `--link` registers it in place. */
function localPlan(req: InstallRequest, src: { abs: string; display: string; isDir: boolean }): Plan {
  const link = req.flags.mode === 'link';
  if (link && isInsideReal(src.abs, packagesDir(req.home))) throw installError('Cannot install in place from inside ~/packages; install it without --link');
  const derived = derivedName({ kind: src.isDir ? 'folder' : 'file', path: src.abs });
  if (!src.isDir) {
    const buf = readRootFile(src.abs, src.display);
    const base = { source: src.display, root: buf.toString('utf8'), derived, symlinksSkipped: 0 };
    if (link) return { ...base, mode: 'inplace', uri: pathToFileURL(src.abs).href, display: src.display, files: [] };
    return { ...base, mode: 'local', display: src.display, files: [{ path: 'string.md', data: buf }] };
  }
  const rootFile = join(src.abs, 'string.md');
  if (link) {
    if (!hasRoot(src.abs)) throw installError(`No string.md in ${src.display}`);
    const root = readRootFile(rootFile, displayOf(rootFile, req.home)).toString('utf8');
    return { mode: 'inplace', source: src.display, uri: pathToFileURL(rootFile).href, display: displayOf(rootFile, req.home), root, derived, files: [], symlinksSkipped: 0 };
  }
  const tree = walkFolder(src.abs, src.display);
  const root = rootText(readRootFile(rootFile, displayOf(rootFile, req.home)));
  const files: PlanFile[] = tree.files.map((f) => ({ path: f.rel, local: f }));
  files.sort((a, b) => (a.path === 'string.md' ? -1 : b.path === 'string.md' ? 1 : 0));
  return { mode: 'local', source: src.display, display: src.display, root, derived, files, symlinksSkipped: tree.symlinksSkipped };
}

/** A GitHub source (§7.3): installed like a manifest with delivery local. */
async function githubPlan(req: InstallRequest, src: GithubSource, deps: PlanDeps): Promise<Plan> {
  const token = githubToken(deps.env, req.agentId);
  const apiOrigin = new URL(deps.githubApi).origin;
  const auth = token ? { value: `Bearer ${token}`, to: (u: URL) => u.origin === apiOrigin || u.origin === 'https://raw.githubusercontent.com' } : undefined;
  const ctx = { ...deps.ctx, ...(auth ? { auth } : {}) };
  const listing = await resolveGithub(src, deps.githubApi, ctx);
  const [first, ...rest] = listing.entries;
  const data = await fetchFileBuffer(first.url, ctx);
  const root = rootText(data);
  return {
    mode: 'local', source: listing.source, display: listing.source, root, derived: derivedName(src),
    files: [{ path: 'string.md', data }, ...rest.map((e) => ({ path: e.path, url: e.url }))], symlinksSkipped: 0, ...(auth ? { auth } : {}),
  };
}

/** An http(s) URL (§7.4): a manifest (delivery local or link) or a single document (link by default). */
async function urlPlan(req: InstallRequest, url: string, deps: PlanDeps): Promise<Plan> {
  const got = await readUrlSource(url, deps.ctx);
  const derived = derivedName({ kind: 'url', url });
  const base = { source: url, display: url, derived, symlinksSkipped: 0 };
  if (got.kind === 'doc') {
    if ((req.flags.mode ?? 'link') === 'link') return { ...base, mode: 'link', uri: url, root: got.text, files: [] };
    const data = Buffer.from(got.text, 'utf8');
    return { ...base, mode: 'local', root: rootText(data), files: [{ path: 'string.md', data }] };
  }
  const entry = got.manifest.files.find((f) => f.path === 'string.md');
  const rootData = entry?.content !== undefined ? Buffer.from(entry.content, 'utf8') : await fetchFileBuffer(entry?.url as string, deps.ctx);
  const root = rootText(rootData);
  if ((req.flags.mode ?? got.manifest.delivery) === 'link') return { ...base, mode: 'link', uri: url, root, files: [] };
  const files: PlanFile[] = [{ path: 'string.md', data: rootData }];
  for (const f of got.manifest.files) {
    if (f.path === 'string.md') continue;
    files.push(f.content !== undefined ? { path: f.path, data: Buffer.from(f.content, 'utf8') } : { path: f.path, url: f.url as string });
  }
  return { ...base, mode: 'local', root, files };
}

/** Plan an install; throws an install error (LoomError) for every refusal. */
export function planInstall(req: InstallRequest, deps: PlanDeps): Promise<Plan> {
  const src = req.source;
  if (src.kind === 'local') return Promise.resolve().then(() => localPlan(req, src));
  if (src.kind === 'github') return githubPlan(req, src, deps);
  return urlPlan(req, src.url, deps);
}
