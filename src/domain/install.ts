import { LoomError } from './errors.js';
import { PACKAGE_NAME_RE } from './ids.js';
import type { PackageRecord } from './ports.js';
import type { CommandCode } from './result.js';

/**
 * The pure part of installs (spec §2 Install manifest, §4.13; behaviour.md §7): flags, source
 * classification, package names, the HTTPS rule and the failure texts. No I/O.
 */

/** behaviour.md §7.1 usage line. */
export const INSTALL_USAGE = 'Usage: /install <path|URL|gh:owner/repo[/path][@ref]> [--app|--tool] [--link|--local] [--as <name>]';

/** The flags of `/install` after parsing (behaviour.md §7.1; spec §4.13 item 4: flags override hints). */
export interface InstallFlags {
  type: 'app' | 'tool' | null;
  mode: 'link' | 'local' | null;
  as: string | null;
}

/** A GitHub source (behaviour.md §7.3): `path` without leading or trailing `/`, ref null = default branch. */
export interface GithubSource {
  kind: 'github';
  owner: string;
  repo: string;
  path: string;
  ref: string | null;
  /** A `…/blob/<ref>/<path>` URL: one file. */
  blob: boolean;
}

/** What a raw source names, first match wins (behaviour.md §7.1 table). */
export type SourceKind = GithubSource | { kind: 'url'; url: string } | { kind: 'local'; raw: string };

const GH_PART = /^[A-Za-z0-9_.-]{1,100}$/;
const LOOPBACK = ['127.0.0.1', 'localhost', '[::1]'];

/** Decode each `/`-separated segment of a URL path; null when one is malformed. */
function decodeSegments(path: string): string[] | null {
  try {
    return path.split('/').filter((s) => s !== '').map((s) => decodeURIComponent(s));
  } catch {
    // A malformed %-escape: not a GitHub path we can name.
    return null;
  }
}

/** `gh:<o>/<r>[/<path>][@<ref>]`, or null when it is not well formed. */
function parseGhForm(raw: string): GithubSource | null {
  const rest = raw.slice(3);
  const at = rest.indexOf('@');
  const where = at < 0 ? rest : rest.slice(0, at);
  const ref = at < 0 ? null : rest.slice(at + 1);
  const [owner, repo, ...path] = where.split('/');
  if (!GH_PART.test(owner ?? '') || !GH_PART.test(repo ?? '') || path.some((s) => s === '' || s === '.' || s === '..')) return null;
  if (ref !== null && (ref === '' || /\s/.test(ref))) return null;
  return { kind: 'github', owner, repo, path: path.join('/'), ref, blob: false };
}

/** `https://github.com/<o>/<r>[.git][/]`, `…/tree/<ref>[/<path>]`, `…/blob/<ref>/<path>`, or null. */
function parseGithubUrl(url: URL): GithubSource | null {
  if (url.protocol !== 'https:' || url.hostname !== 'github.com' || url.port !== '') return null;
  const segs = decodeSegments(url.pathname);
  if (!segs || segs.length < 2) return null;
  const owner = segs[0];
  const repo = segs[1].replace(/\.git$/, '');
  if (!GH_PART.test(owner) || !GH_PART.test(repo)) return null;
  if (segs.length === 2) return { kind: 'github', owner, repo, path: '', ref: null, blob: false };
  const [, , how, ref, ...path] = segs;
  if (how === 'tree' && ref) return { kind: 'github', owner, repo, path: path.join('/'), ref, blob: false };
  if (how === 'blob' && ref && path.length > 0) return { kind: 'github', owner, repo, path: path.join('/'), ref, blob: true };
  return null;
}

/**
 * Classify a source (behaviour.md §7.1): GitHub forms, other http(s) URLs, else a local path.
 * A `gh:` source that is not well formed is an INVALID_ARGS failure (thrown as LoomError).
 */
export function classifySource(raw: string): SourceKind {
  if (raw.startsWith('gh:')) {
    const gh = parseGhForm(raw);
    if (!gh) throw installError(`Invalid GitHub source: ${raw} (use gh:owner/repo[/path][@ref])`, 'INVALID_ARGS');
    return gh;
  }
  if (/^https?:\/\//i.test(raw)) {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw installError(`Invalid URL: ${raw}`, 'INVALID_ARGS');
    }
    return parseGithubUrl(url) ?? { kind: 'url', url: url.href };
  }
  return { kind: 'local', raw };
}

/** `gh:<o>/<r>[/<path>]@<ref>` (behaviour.md §7.3 messages and the recorded source). */
export function githubDisplay(s: GithubSource, ref: string | null = s.ref): string {
  return `gh:${s.owner}/${s.repo}${s.path ? `/${s.path}` : ''}${ref ? `@${ref}` : ''}`;
}

/** behaviour.md §7.1 HTTPS rule: every fetch uses https://, except plain http:// to loopback hosts. */
export function httpsRule(url: URL): string | null {
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:') {
    if (LOOPBACK.includes(url.hostname)) return null;
    return `Refusing plain http:// URL ${url.href}; use https:// (http:// is allowed only for 127.0.0.1, localhost and [::1])`;
  }
  return `Cannot fetch ${url.href}: unsupported URL scheme ${url.protocol}`;
}

/**
 * Sanitise a derived name (behaviour.md §7.5): characters outside `[A-Za-z0-9_-]` become `-`, runs of
 * `-` collapse, leading and trailing `-` drop, cut to 64. Leading `_` drop too, because a package name
 * must start with a letter or digit (§1.2). Returns '' when nothing is left.
 */
export function sanitizeName(raw: string): string {
  const tidy = (s: string) => s.replace(/^[-_]+/, '').replace(/-+$/, '');
  return tidy(tidy(raw.replace(/[^A-Za-z0-9_-]/g, '-').replace(/-+/g, '-')).slice(0, 64));
}

const stripMd = (s: string) => s.replace(/\.md$/i, '');

/** The last segment naming a package in a file path: a `string.md` stands for its folder. */
function nameOfFilePath(segs: string[]): string {
  const last = segs[segs.length - 1] ?? '';
  if (last === 'string.md' && segs.length > 1) return segs[segs.length - 2];
  return stripMd(last);
}

/**
 * The name derived from a source (behaviour.md §7.5): file: base name without `.md` (the folder's
 * name for `string.md`); folder: its name; GitHub: the last path segment, else the repo; URL: the
 * last path segment without extension, skipping `string`, `index` and `manifest`, else the host.
 */
export function derivedName(source: { kind: 'file'; path: string } | { kind: 'folder'; path: string } | GithubSource | { kind: 'url'; url: string }): string {
  if (source.kind === 'folder') return source.path.split('/').filter(Boolean).pop() ?? '';
  if (source.kind === 'file') return nameOfFilePath(source.path.split('/').filter(Boolean));
  if (source.kind === 'github') {
    const segs = source.path.split('/').filter(Boolean);
    if (segs.length === 0) return source.repo;
    return source.blob || /\.md$/i.test(segs[segs.length - 1]) ? nameOfFilePath(segs) : segs[segs.length - 1];
  }
  const url = new URL(source.url);
  const segs = decodeSegments(url.pathname) ?? [];
  for (let i = segs.length - 1; i >= 0; i--) {
    const base = segs[i].replace(/\.[^.]*$/, '');
    if (base !== '' && !['string', 'index', 'manifest'].includes(base)) return base;
  }
  return url.hostname;
}

/** Name and type from flags, frontmatter and source (behaviour.md §7.5); throws when no name can be made. */
export function packageIdentity(flags: InstallFlags, front: Record<string, unknown>, derived: string): { name: string; type: 'app' | 'tool' } {
  let name = flags.as;
  if (name === null) {
    const fromFront = typeof front.name === 'string' ? sanitizeName(front.name) : '';
    name = fromFront !== '' ? fromFront : sanitizeName(derived);
  }
  if (!PACKAGE_NAME_RE.test(name)) throw installError('Cannot derive a package name; use --as <name>');
  const type = flags.type ?? (front.type === 'tool' || front.type === 'app' ? front.type : 'app');
  return { name, type };
}

/**
 * A failed install step as the one error type (architecture.md): `error` carries the command code
 * (INSTALL_FAILED unless said otherwise), `message` the text after `ERROR(<code>): `.
 */
export function installError(message: string, code: CommandCode = 'INSTALL_FAILED'): LoomError {
  return new LoomError(400, code, { message });
}

/** The code and message of an install failure (a LoomError from installError, else an internal error). */
export function failureOf(err: unknown): { code: CommandCode; message: string } {
  if (err instanceof LoomError && err.detail !== undefined) return { code: err.error as CommandCode, message: err.detail };
  return { code: 'INTERNAL_ERROR', message: `Internal error: ${err instanceof Error ? err.message : String(err)}` };
}

/** What an install produced (the install machine's output). */
export type InstallOutcome =
  | {
    ok: true; record: PackageRecord; reinstalled: boolean; symlinksSkipped: number; display: string;
    /** The package of that name this install replaced (its answer says what was there before). */
    previous?: PackageRecord;
  }
  | { ok: false; code: CommandCode; message: string };

/** Progress of a running install (behaviour.md §13.2 `installs` entries). */
export interface InstallProgress {
  install_id: string;
  name: string | null;
  source: string;
  state: 'staging' | 'installed' | 'aborted';
  files_done: number;
  files_total: number;
  bytes: number;
}

/** `ins_` + 16 hex characters; its first 8 hex name the staging and `.old-` folders (behaviour.md §7.6). */
export const INSTALL_ID_RE = /^ins_[0-9a-f]{16}$/;

/** The 8 hex characters of an install id used in folder names. */
export function folderHex(installId: string): string {
  return installId.slice(4, 12);
}

/** A source after the command resolved it (local paths passed the workspace policy and exist). */
export type ResolvedSource = GithubSource | { kind: 'url'; url: string } | { kind: 'local'; abs: string; display: string; isDir: boolean };

/** What `/install` asks the install actor to do (the install machine's opaque request). */
export interface InstallRequest {
  agentId: string;
  home: string;
  source: ResolvedSource;
  flags: InstallFlags;
}
