/**
 * Reading a text through its percent-encoding (RFC 3986 §2.1), so a secret written `%63aps_…` or
 * after `%20` is found as the reader of a URL would see it, and masked where it stands in the
 * original text. Only escapes of ASCII bytes are decoded: every secret shape is ASCII, and a
 * multi-byte sequence left as it is cannot hide one.
 */

/** A part of a text to hide: [start, end) in UTF-16 units, and the text shown in its place. */
export type Span = readonly [start: number, end: number, mask: string];

const ESCAPE = /%([0-7][0-9A-Fa-f])/g;

/** A text decoded once, with what maps its positions back to the text it was read from. */
interface Decoded {
  text: string;
  /** Decoded positions that were an escape (three units in the source), ascending. */
  escapes: number[];
}

function decodeOnce(text: string): Decoded | null {
  if (!text.includes('%')) return null;
  const escapes: number[] = [];
  let out = '';
  let last = 0;
  for (const m of text.matchAll(ESCAPE)) {
    const i = m.index;
    out += text.slice(last, i);
    escapes.push(out.length);
    out += String.fromCharCode(parseInt(m[1], 16));
    last = i + 3;
  }
  return escapes.length === 0 ? null : { text: out + text.slice(last), escapes };
}

/** How many escapes lie before decoded position `d` (binary search). */
function escapesBefore(escapes: readonly number[], d: number): number {
  let lo = 0;
  let hi = escapes.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (escapes[mid] < d) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Source start of decoded position `d`, and source end of a decoded span ending (exclusive) at `d`. */
const sourceStart = (v: Decoded, d: number) => d + 2 * escapesBefore(v.escapes, d);
const sourceEnd = (v: Decoded, d: number) => (d === 0 ? 0 : sourceStart(v, d - 1) + (v.escapes[escapesBefore(v.escapes, d - 1)] === d - 1 ? 3 : 1));

/**
 * The spans `find` reports in `text` read through up to `depth` levels of percent-encoding (not in
 * `text` as written: the caller looked there), mapped back onto `text`. Empty when `text` holds
 * no escape.
 */
export function decodedSpans(text: string, find: (decoded: string) => Span[], depth: number): Span[] {
  if (depth <= 0) return [];
  const v = decodeOnce(text);
  if (!v) return [];
  const found = [...find(v.text), ...decodedSpans(v.text, find, depth - 1)];
  return found.map(([s, e, mask]) => [sourceStart(v, s), sourceEnd(v, e), mask] as const);
}

/**
 * `text` with each span replaced by its mask. Overlapping spans (a value inside or across
 * another, a token inside a query value) are merged and shown as one mask, the earliest-starting
 * (then longest) one's, so no character of any of them remains.
 *
 * `safeEnd` is for a text cut from a longer one: spans starting at or after it may be cut short,
 * so nothing from there on is shown (`…` marks the cut).
 */
export function applySpans(text: string, spans: Span[], safeEnd = text.length): string {
  const tail = safeEnd < text.length ? '…' : '';
  const kept = safeEnd < text.length ? spans.filter((s) => s[0] < safeEnd) : spans;
  if (kept.length === 0) return tail ? text.slice(0, safeEnd) + tail : text;
  const sorted = [...kept].sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  let out = '';
  let pos = 0;
  for (let k = 0; k < sorted.length;) {
    const [start, first, mask] = sorted[k];
    let end = first;
    for (k++; k < sorted.length && sorted[k][0] < end; k++) end = Math.max(end, sorted[k][1]);
    out += text.slice(pos, start) + mask;
    pos = end;
  }
  return out + (pos < safeEnd ? text.slice(pos, safeEnd) : '') + tail;
}
