import { CMD_DISPLAY_CHARS, TRACE_SECRET_MIN_CHARS } from './limits.js';
import { cutLine, firstLine } from './output.js';
import { applySpans, decodedSpans, type Span } from './percentView.js';
import { maskShapes } from './secretShapes.js';

/**
 * The one masking rule for a text an agent controls that reaches a reader other than the agent's
 * own answer (behaviour.md §13.4: the inspector, `loom top`, install listings, traces' shapes, the
 * request log): every secret of a known shape masked (secretShapes.ts), then every `known` value
 * (env-store values, session variables) replaced by its mask, each as written and as the text
 * reads once percent-decoded.
 */
export function redactText(text: string, known?: ValueMasks | null): string {
  const shaped = maskShapes(text);
  return known ? maskKnown(shaped, known) : shaped;
}

/** `text` with every value of `masks` masked, as written and percent-decoded (`safeEnd`: see maskValues). */
function maskKnown(text: string, masks: ValueMasks, safeEnd = text.length): string {
  const spans = valueSpans(text, masks, safeEnd);
  for (const s of decodedSpans(text, (d) => valueSpans(d, masks), DECODE_DEPTH)) if (s[0] < safeEnd) spans.push(s);
  return applySpans(text, spans, safeEnd);
}

/** Levels of percent-encoding read through for values (as for shapes). */
const DECODE_DEPTH = 3;

/**
 * `value` (plain JSON: objects, arrays, strings, numbers…) with every string passed through
 * {@link redactText}, except the strings of the keys in `keep` (identifiers a reader keys on).
 * Keys are kept as they are. This is how each reader's masking point applies the one rule to
 * everything it feeds, fields added later included.
 */
export function shown<T>(value: T, masks: ValueMasks | null, keep: ReadonlySet<string> = NO_KEYS): T {
  return walk(value, masks, keep) as T;
}

const NO_KEYS: ReadonlySet<string> = new Set();

function walk(v: unknown, masks: ValueMasks | null, keep: ReadonlySet<string>): unknown {
  if (typeof v === 'string') return redactText(v, masks);
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map((x) => walk(x, masks, keep));
  // fromEntries defines each key, so a key named `__proto__` stays a key (docs/decisions/0012).
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, keep.has(k) && typeof x === 'string' ? x : walk(x, masks, keep)]));
}

/**
 * What a command may show outside its own answer (the state inspector, behaviour.md §13.4): the
 * first line, cut to 200 characters (§1.5), with a `/set` value masked as `/set` listings mask
 * persistent values (§6.4: the first 2 characters then `…`, under 6 characters only `…`), and every
 * value of `masks` (the agent's env-store values, the topic's session variables) replaced by its
 * mask, and every secret of a known shape masked (redactText). The body (lines after the first)
 * never appears.
 */
export function redactCommand(cmd: string, masks?: ValueMasks | null): string {
  // Shapes over the whole line: a secret is masked whole even where only its start is shown.
  const line = maskShapes(maskSet(firstLine(cmd)));
  if (!masks) return cutLine(line);
  // Only the start of a long line can be shown: enough of it that every value overlapping what is
  // shown lies whole inside it (see maskValues), so a 10 MiB line is not scanned whole. A value
  // may be percent-encoded there: three units for each of its own.
  const longest = 3 * masks.maxLen;
  const bound = SHOWN_UNITS + (Math.floor(SHOWN_UNITS / masks.minMask) + 1) * longest;
  return cutLine(line.length > bound ? maskKnown(line.slice(0, bound), masks, bound - longest + 1) : maskKnown(line, masks));
}

/** UTF-16 units that can hold the shown 200 characters. */
const SHOWN_UNITS = 2 * CMD_DISPLAY_CHARS;

/** `/set $NAME = value` → `/set $NAME = "ab…"` (behaviour.md §13.4). */
function maskSet(line: string): string {
  if (!/^\/set(\s|$)/i.test(line)) return line;
  const m = /^(\/set\s+(?:\$[A-Za-z_][A-Za-z0-9_]*|\{[^}]*\})\s*=\s*)(.*)$/i.exec(line);
  // Not a plain assignment (a fenced value, a typo): nothing after the word is shown.
  if (!m) return line.length > 4 ? '/set …' : line;
  return `${m[1]}${maskSetValue(m[2])}`;
}

/** A value's mask: quotes removed, the first 2 characters (6 or more) then `…`. */
function maskSetValue(raw: string): string {
  let v = raw.trim();
  const q = v[0];
  if (q === '"' || q === "'") v = v.length >= 2 && v.endsWith(q) ? v.slice(1, -1) : v.slice(1);
  // 12 UTF-16 units hold at least 6 characters: a long value is not split whole into characters.
  const chars = [...v.slice(0, 12)];
  return `"${chars.length < 6 ? '' : chars.slice(0, 2).join('')}…"`;
}

// ---- values kept out (env store, session variables) ------------------------------------------

/** A value to keep out of what the inspector shows, and the text shown in its place. */
export type MaskedValue = readonly [value: string, mask: string];

/** Values ready for maskValues (compileMasks): longest first, one mask per value. */
export interface ValueMasks {
  /** Distinct per compiled list: what was redacted with which list is remembered by this, not by the list (its values). */
  readonly id: number;
  readonly list: readonly MaskedValue[];
  /** Length of the longest value (UTF-16 units). */
  readonly maxLen: number;
  /** Length of the shortest mask (at least 1). */
  readonly minMask: number;
}

/** How an env-store value is shown: its name, as traces write it (behaviour.md §14.2); no character of the value. */
export const envMask = (name: string): string => `\${env:${name}}`;
/** How a session variable's value is shown: the variable, as a command would refer to it. */
export const sessionMask = (name: string): string => `{${name}}`;
/** The mask of a value whose name would show a value (a name that contains one). */
const BLIND_MASK = '…';
/** A value that is one shape's mask and nothing else (`ghp_<secret>`): shown as it is. */
const ONLY_MASK = /^\s*[\w/]*<(?:secret|token)>\s*$/;
/** The last ValueMasks.id given. */
let compiled = 0;

/**
 * Compile values and their masks, the first mask of a value winning. Left out: values shorter than
 * TRACE_SECRET_MIN_CHARS (the trace recorder's rule: they would hit ordinary words) and values
 * spanning lines (a first line cannot hold them). A value with white space around it is also kept
 * out trimmed, since the shown line is trimmed. A mask that contains a value (a variable named
 * after another's value) shows `…` instead. Null when nothing is left to mask.
 */
export function compileMasks(pairs: Iterable<MaskedValue>): ValueMasks | null {
  const byValue = new Map<string, string>();
  const add = (value: string, mask: string) => {
    if (value.includes('\n') || byValue.has(value)) return;
    // Characters, not UTF-16 units (as the trace recorder counts); a value of 2×min units has enough.
    if (value.length < 2 * TRACE_SECRET_MIN_CHARS && [...value].length < TRACE_SECRET_MIN_CHARS) return;
    byValue.set(value, mask);
  };
  for (const [value, mask] of pairs) {
    // Shapes are masked before values: a value holding one is also looked for as it then reads.
    for (const v of new Set([value, value.trim(), maskShapes(value), maskShapes(value.trim())])) if (!ONLY_MASK.test(v)) add(v, mask);
  }
  if (byValue.size === 0) return null;
  // Only values no longer than a mask can be inside one (names are short: few values are checked).
  const longestMask = Math.max(...[...byValue.values()].map((m) => m.length));
  const short = [...byValue.keys()].filter((v) => v.length <= longestMask);
  const list: MaskedValue[] = [...byValue].map(([value, mask]) => [value, short.some((v) => mask.includes(v)) ? BLIND_MASK : mask]);
  list.sort((a, b) => b[0].length - a[0].length);
  return { id: ++compiled, list, maxLen: list[0][0].length, minMask: Math.max(1, Math.min(...list.map(([, m]) => m.length))) };
}

/**
 * `text` with every occurrence of every value replaced by its mask. Occurrences that overlap (a
 * value inside or across another, a value that is a prefix of a longer one) are merged and shown as
 * one mask (the earliest, longest one's), so no character of any occurrence remains. Plain string
 * search: values are never read as patterns.
 *
 * `safeEnd` is for a text cut from a longer one: occurrences starting at or after it may be cut
 * short, so nothing from there on is shown (`…` marks the cut).
 */
export function maskValues(text: string, masks: ValueMasks, safeEnd = text.length): string {
  return applySpans(text, valueSpans(text, masks, safeEnd), safeEnd);
}

/** Where the values of `masks` occur in `text` (starting before `safeEnd`), each with its mask. */
export function valueSpans(text: string, masks: ValueMasks, safeEnd = text.length): Span[] {
  const spans: Span[] = [];
  for (const [value, mask] of masks.list) {
    for (let i = text.indexOf(value); i >= 0 && i < safeEnd; i = text.indexOf(value, i + 1)) spans.push([i, i + value.length, mask]);
  }
  return spans;
}
