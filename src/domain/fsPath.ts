/**
 * Paths of the file-system plane (spec §4.1; behaviour.md §9.6 step 4 and §9.5 prefix rules).
 * Pure functions: no file-system access happens here.
 */

/** spec §1: the system-plane verb universe. */
export const FS_VERBS = ['PUT', 'GET', 'DELETE', 'STAT'] as const;
export type FsVerb = (typeof FS_VERBS)[number];

/** spec §4.1 verb mapping: PUT→PUT, GET→GET, DELETE→DELETE, HEAD→STAT. */
export const VERB_OF_METHOD: Readonly<Record<string, FsVerb>> = { PUT: 'PUT', GET: 'GET', DELETE: 'DELETE', HEAD: 'STAT' };

/**
 * Linux NAME_MAX and PATH_MAX - 1: a longer segment or path can never name a file, so it is one of
 * the "paths that can never be legal" of spec §7 (behaviour.md §9.6 lists the lexical rules; the
 * length rule is Loom's addition for the same class).
 */
export const NAME_MAX_BYTES = 255;
export const PATH_MAX_BYTES = 4095;

/** True when `s` is a dot segment. */
const isDot = (s: string): boolean => s === '.' || s === '..';

/** A decoded segment that can name a file inside a folder (no separators, NUL, dots, overlong names). */
function legalName(decoded: string): boolean {
  if (decoded === '' || isDot(decoded)) return false;
  if (decoded.includes('/') || decoded.includes('\\') || decoded.includes('\0')) return false;
  return Buffer.byteLength(decoded, 'utf8') <= NAME_MAX_BYTES;
}

/**
 * Parse the raw request path after `/fs` (up to `?`) into decoded segments, or null when it can never
 * be legal (behaviour.md §9.6 step 4): it must be empty or start with `/`; split on `/`; the first
 * empty segment and one trailing empty segment are dropped; each segment is percent-decoded once.
 * Refused: malformed percent-encoding, empty segments, `.`/`..` (raw or decoded), `/` or `\` inside a
 * decoded segment, a raw `\`, NUL, and segments or paths longer than the OS can ever name.
 */
export function parseFsPath(rawAfterFs: string): string[] | null {
  if (rawAfterFs === '') return [];
  if (!rawAfterFs.startsWith('/')) return null;
  const parts = rawAfterFs.split('/').slice(1);
  if (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
  const out: string[] = [];
  for (const raw of parts) {
    if (raw === '' || raw.includes('\\') || raw.includes('\0') || isDot(raw)) return null;
    let decoded: string;
    try {
      decoded = decodeURIComponent(raw);
    } catch {
      // Malformed percent-encoding (or an encoding of invalid UTF-8): can never be legal.
      return null;
    }
    if (!legalName(decoded)) return null;
    out.push(decoded);
  }
  if (Buffer.byteLength(out.join('/'), 'utf8') > PATH_MAX_BYTES) return null;
  return out;
}

/**
 * Normalise a capability `path_prefix` (behaviour.md §9.5): one leading `/` and one trailing `/`
 * removed, then every segment must be a legal name (the §9.6 rules; JSON text is not percent-decoded).
 * Returns the normalised prefix (`""` = whole workspace) or null when it can never be legal.
 */
export function normalisePrefix(raw: string): string | null {
  let p = raw;
  if (p.startsWith('/')) p = p.slice(1);
  if (p.endsWith('/')) p = p.slice(0, -1);
  if (p === '') return '';
  const segs = p.split('/');
  if (!segs.every(legalName)) return null;
  if (Buffer.byteLength(p, 'utf8') > PATH_MAX_BYTES) return null;
  return p;
}

/** Segment-wise prefix test: `data` covers `data/x` but never `database/x` (spec §4.1 sibling-prefix tricks). */
export function insidePrefix(segments: readonly string[], prefix: string): boolean {
  if (prefix === '') return true;
  const pre = prefix.split('/');
  if (pre.length > segments.length) return false;
  return pre.every((p, i) => segments[i] === p);
}

/** The normalised workspace path of segments as /fs bodies show it (`docs/a.txt`; the root is `/`). */
export function displayFsPath(segments: readonly string[]): string {
  return segments.length === 0 ? '/' : segments.join('/');
}
