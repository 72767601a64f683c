import { httpsRule } from '../domain/install.js';
import { INSTALL_MAX_FILES } from '../domain/limits.js';

/**
 * Install manifest validation (spec §2 Install manifest; behaviour.md §7.4 steps 2–4), shared by
 * `/open` of a manifest URL (behaviour.md §3.3) and the install feature. Pure: no I/O.
 */

/** One validated `files[]` entry. */
export interface ManifestFile {
  path: string;
  url?: string;
  content?: string;
}

/** A validated manifest. */
export interface Manifest {
  files: ManifestFile[];
  delivery: 'local' | 'link';
  installHint?: string;
}

/** behaviour.md §1.8: most entries of a manifest. */
export const MANIFEST_MAX_FILES = INSTALL_MAX_FILES;

/** True when `value` is a JSON object with a `files` array (behaviour.md §7.4 step 2). */
export function isManifest(value: unknown): value is { files: unknown[] } & Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && Array.isArray((value as { files?: unknown }).files);
}

/** The reason a manifest path is refused, in the order of behaviour.md §7.4 step 3, or null. */
export function badPathReason(p: string): string | null {
  if (p.includes('..')) return 'contains ".."';
  if (p.startsWith('/')) return 'starts with "/"';
  if (p.startsWith('\\')) return 'starts with a backslash';
  if (p.includes('\u0000')) return 'contains a NUL character';
  if (p.includes('\\')) return 'contains a backslash';
  if (p.split('/').some((s) => s === '' || s === '.')) return 'has an empty or "." segment';
  if (p.length > 255) return 'is longer than 255 characters';
  return null;
}

/**
 * The first pair of package paths that cannot both be files (behaviour.md §7.4): the same path
 * twice, or a path that another one needs as a folder (`a` and `a/b.md`, in either order). Decided
 * on the list alone, before anything is fetched or written; null when there is none.
 */
export function pathCollision(paths: readonly string[]): string | null {
  const seen = new Set<string>();
  for (const p of paths) {
    if (seen.has(p)) return `path collision: ${p} is listed twice`;
    seen.add(p);
  }
  for (const p of paths) {
    for (let i = p.indexOf('/'); i >= 0; i = p.indexOf('/', i + 1)) {
      if (seen.has(p.slice(0, i))) return `path collision: ${p.slice(0, i)} and ${p}`;
    }
  }
  return null;
}

/** http(s) rule for manifest file URLs: https, or http only for loopback hosts (behaviour.md §7.1). */
export function allowedFileUrl(u: string): boolean {
  try {
    return httpsRule(new URL(u)) === null;
  } catch {
    // Not a URL at all: refused like a plain-http one.
    return false;
  }
}

/**
 * Validate a manifest (behaviour.md §7.4 steps 2–4). Returns the manifest or the reason text of
 * the first problem (callers wrap it: `Invalid manifest at <url>: <reason>` or INSTALL_FAILED).
 */
export function validateManifest(value: { files: unknown[] } & Record<string, unknown>, url: string): { ok: true; manifest: Manifest } | { ok: false; reason: string } {
  const files = value.files;
  if (files.length === 0) return { ok: false, reason: 'Manifest files[] must be a non-empty array' };
  const pathOf = (e: unknown) => (e !== null && typeof e === 'object' ? (e as { path?: unknown }).path : undefined);
  if (!files.some((e) => pathOf(e) === 'string.md')) {
    const declared = files.map(pathOf).filter((p): p is string => typeof p === 'string').slice(0, 5);
    return { ok: false, reason: `Manifest at ${url} has no "string.md" entry in files[] (declared: ${declared.join(', ')})` };
  }
  if (files.length > MANIFEST_MAX_FILES) return { ok: false, reason: `Manifest has ${files.length} files; at most ${MANIFEST_MAX_FILES} are allowed` };
  const out: ManifestFile[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < files.length; i++) {
    const e = files[i] as Record<string, unknown> | null;
    const p = pathOf(e);
    if (typeof p !== 'string') return { ok: false, reason: `Invalid manifest entry ${i}: path must be a string` };
    const bad = badPathReason(p) ?? (seen.has(p) ? 'is duplicated' : null);
    if (bad) return { ok: false, reason: `Invalid manifest entry ${i}: path "${p}" ${bad}` };
    seen.add(p);
    const content = e?.content;
    const fileUrl = e?.url;
    if (typeof content === 'string') out.push({ path: p, content });
    else if (typeof fileUrl === 'string') {
      if (!allowedFileUrl(fileUrl)) return { ok: false, reason: `Invalid manifest entry ${i} (${p}): url must be https://` };
      out.push({ path: p, url: fileUrl });
    } else return { ok: false, reason: `Invalid manifest entry ${i} (${p}): needs a "url" or "content" string` };
  }
  const collision = pathCollision(out.map((f) => f.path));
  if (collision) return { ok: false, reason: collision };
  const d = value.delivery;
  if (d !== undefined && d !== 'local' && d !== 'link' && d !== 'any') return { ok: false, reason: `Unknown delivery "${String(d)}" (use local, link or any)` };
  const hint = typeof value.install_hint === 'string' ? value.install_hint : undefined;
  return { ok: true, manifest: { files: out, delivery: d === 'link' ? 'link' : 'local', ...(hint !== undefined ? { installHint: hint } : {}) } };
}
