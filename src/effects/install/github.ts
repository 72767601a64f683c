import { githubDisplay, installError, type GithubSource } from '../../domain/install.js';
import { GITHUB_MAX_API_REQUESTS, GITHUB_MAX_DEPTH, INSTALL_FILE_BYTES, INSTALL_MAX_FILES, INSTALL_TOTAL_BYTES } from '../../domain/limits.js';
import { badPathReason, pathCollision } from '../../sfmd/manifest.js';
import { getBuffered, tooLargePackage, type FetchContext } from './fetch.js';

/**
 * GitHub sources through the REST API (behaviour.md §7.3): the default branch when no ref is given,
 * the contents API (recursively, depth ≤ 8; symlinks and submodules skipped) and each entry's
 * `download_url`. The result is a file list installed exactly like a manifest with delivery local.
 */

/** A file to fetch: its path inside the package and where to get it. */
export interface RemoteEntry {
  path: string;
  url: string;
}

/** What a GitHub source resolves to. */
export interface GithubListing {
  /** `gh:<o>/<r>[/<path>]@<ref>` with the ref resolved. */
  source: string;
  /** string.md first when it is a folder; one entry named string.md for a single file. */
  entries: RemoteEntry[];
  single: boolean;
}

interface ContentEntry {
  type?: unknown;
  name?: unknown;
  path?: unknown;
  size?: unknown;
  download_url?: unknown;
}

const HEADERS = { Accept: 'application/vnd.github+json', 'X-GitHub-Api-Version': '2022-11-28' };

const enc = (p: string) => p.split('/').filter(Boolean).map(encodeURIComponent).join('/');

/** The API requests one install may still make (GITHUB_MAX_API_REQUESTS). */
interface ApiBudget {
  left: number;
  /** The source as the refusal names it (`o/r[/path]`). */
  what: string;
}

/** GET `{api}<path>` as JSON, with the status messages of §7.3; one request of the install's budget. */
async function apiGet(api: string, path: string, notFound: string, ctx: FetchContext, budget: ApiBudget): Promise<unknown> {
  if (budget.left <= 0) throw installError(`GitHub: ${budget.what} needs more than ${GITHUB_MAX_API_REQUESTS} API requests (one per folder); install a smaller folder`);
  budget.left--;
  const url = api.replace(/\/+$/, '') + path;
  const r = await getBuffered(url, HEADERS, ctx);
  if (r.status === 404) throw installError(`GitHub: not found: ${notFound}`);
  if (r.status === 401 || r.status === 403 || r.status === 429) {
    throw installError(`GitHub API refused the request (HTTP ${r.status}); set $GITHUB_TOKEN if rate-limited`);
  }
  if (r.status < 200 || r.status > 299) throw installError(`Cannot fetch ${url}: HTTP ${r.status}`);
  try {
    return JSON.parse(r.body.toString('utf8'));
  } catch {
    // The API answered something that is not JSON.
    throw installError(`Cannot fetch ${url}: the answer is not JSON`);
  }
}

const where = (s: GithubSource, ref: string | null) => `${s.owner}/${s.repo}${s.path ? `/${s.path}` : ''}${ref ? `@${ref}` : ''}`;

/** The contents listing of one folder (or the entry of one file). */
function contents(api: string, s: GithubSource, path: string, ref: string, ctx: FetchContext, budget: ApiBudget): Promise<unknown> {
  const p = `/repos/${enc(s.owner)}/${enc(s.repo)}/contents${path ? `/${enc(path)}` : ''}?ref=${encodeURIComponent(ref)}`;
  return apiGet(api, p, where({ ...s, path }, ref), ctx, budget);
}

/**
 * Why a listed name cannot be a file or folder name of the package, or null: the path rules of
 * manifests (no `..`, no empty or `.` segment …) for the path it makes, and no `/` inside the name.
 */
function nameProblem(name: unknown, rel: string): string | null {
  if (typeof name !== 'string' || name === '') return `GitHub: an entry in ${rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/')) : 'the package root'} has no name`;
  const bad = badPathReason(rel) ?? (name.includes('/') ? 'has a "/" inside a name' : null);
  return bad ? `GitHub: path "${rel}" ${bad}` : null;
}

const downloadOf = (e: ContentEntry, shown: string): string => {
  if (typeof e.download_url !== 'string') throw installError(`GitHub: ${shown} has no download URL`);
  return e.download_url;
};

/** Walk a folder listing into entries (string.md first), under the limits of §1.8. */
async function walk(api: string, s: GithubSource, ref: string, top: ContentEntry[], ctx: FetchContext, budget: ApiBudget): Promise<RemoteEntry[]> {
  const shown = githubDisplay(s, ref);
  const names = top.map((e) => String(e.name));
  if (!top.some((e) => e.type === 'file' && e.name === 'string.md')) {
    throw installError(`No string.md in ${shown} (found: ${names.slice(0, 10).join(', ')}${names.length > 10 ? ', …' : ''})`);
  }
  const out: RemoteEntry[] = [];
  let total = 0;
  const queue: Array<{ list: ContentEntry[]; prefix: string; depth: number }> = [{ list: top, prefix: '', depth: 0 }];
  while (queue.length > 0) {
    const { list, prefix, depth } = queue.shift() as { list: ContentEntry[]; prefix: string; depth: number };
    for (const e of list) {
      const rel = prefix ? `${prefix}/${String(e.name)}` : String(e.name);
      if (e.type !== 'dir' && e.type !== 'file') continue; // symlink and submodule entries are skipped (§7.3)
      // Folder names make the next request's URL: checked like file names before it is made.
      const problem = nameProblem(e.name, rel);
      if (problem) throw installError(problem);
      if (e.type === 'dir') {
        if (depth >= GITHUB_MAX_DEPTH) throw installError(`${shown} is nested deeper than ${GITHUB_MAX_DEPTH} folders (${rel})`);
        const sub = await contents(api, s, s.path ? `${s.path}/${rel}` : rel, ref, ctx, budget);
        if (!Array.isArray(sub)) throw installError(`GitHub: ${rel} is not a folder listing`);
        queue.push({ list: sub as ContentEntry[], prefix: rel, depth: depth + 1 });
        continue;
      }
      const size = typeof e.size === 'number' ? e.size : 0;
      if (size > INSTALL_FILE_BYTES) throw installError(`${shown}: ${rel} is larger than ${INSTALL_FILE_BYTES / 1048576} MiB`);
      total += size;
      if (total > INSTALL_TOTAL_BYTES) throw tooLargePackage();
      out.push({ path: rel, url: downloadOf(e, rel) });
      if (out.length > INSTALL_MAX_FILES) throw installError(`${shown} has more than ${INSTALL_MAX_FILES} files`);
    }
  }
  // Duplicate names, or a file and a folder of one name: refused before any file is fetched.
  const collision = pathCollision(out.map((e) => e.path));
  if (collision) throw installError(collision);
  return out.sort((a, b) => (a.path === 'string.md' ? -1 : b.path === 'string.md' ? 1 : a.path < b.path ? -1 : 1));
}

/** Resolve a GitHub source to its files (behaviour.md §7.3). */
export async function resolveGithub(s: GithubSource, api: string, ctx: FetchContext): Promise<GithubListing> {
  const budget: ApiBudget = { left: GITHUB_MAX_API_REQUESTS, what: where(s, null) };
  let ref = s.ref;
  if (ref === null) {
    const repo = await apiGet(api, `/repos/${enc(s.owner)}/${enc(s.repo)}`, `${s.owner}/${s.repo}`, ctx, budget);
    const branch = (repo as { default_branch?: unknown } | null)?.default_branch;
    if (typeof branch !== 'string' || branch === '') throw installError(`GitHub: ${s.owner}/${s.repo} names no default branch`);
    ref = branch;
  }
  const source = githubDisplay(s, ref);
  const listing = await contents(api, s, s.path, ref, ctx, budget);
  if (Array.isArray(listing)) {
    if (s.blob) throw installError(`GitHub: ${where(s, ref)} is a folder, not a file`);
    return { source, entries: await walk(api, s, ref, listing as ContentEntry[], ctx, budget), single: false };
  }
  const e = listing as ContentEntry;
  if (e?.type !== 'file') throw installError(`GitHub: ${where(s, ref)} is not a file or folder`);
  if (typeof e.size === 'number' && e.size > INSTALL_FILE_BYTES) throw installError(`${source} is larger than ${INSTALL_FILE_BYTES / 1048576} MiB`);
  return { source, entries: [{ path: 'string.md', url: downloadOf(e, source) }], single: true };
}
