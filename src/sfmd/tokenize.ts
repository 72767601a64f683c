/**
 * The argument tokenizer of behaviour.md §5.2: splits the argument text of an action call into
 * tokens, remembering which tokens were (partly) quoted, because only unquoted tokens can be flags.
 */

/** One argument token. */
export interface ArgToken {
  /** The token text with quotes removed and escapes applied. */
  text: string;
  /**
   * Index in `text` of the first character that came from a quoted or escaped piece, or -1 when
   * nothing was quoted. `--name="a b"` has its flag part unquoted, so it still reads as a flag.
   */
  quotedFrom: number;
}

/** Result of tokenizing: tokens, or the one tokenizer error (behaviour.md §5.2). */
export type TokenizeResult = { ok: true; tokens: ArgToken[] } | { ok: false; message: string };

/** behaviour.md §5.2 exact message. */
export const UNTERMINATED_QUOTE = 'Unterminated quote in the arguments';

const SEPARATOR = /[ \t\n]/;

/**
 * Split argument text into tokens (behaviour.md §5.2): unquoted spaces, tabs and newlines separate;
 * `"…"` honours `\"` and `\\` (other backslashes are literal); `'…'` has no escapes; outside quotes
 * a backslash escapes the next character; adjacent pieces form one token.
 */
export function tokenize(input: string): TokenizeResult {
  const tokens: ArgToken[] = [];
  let text = '';
  let quotedFrom = -1;
  let inToken = false;
  const markQuoted = () => { if (quotedFrom < 0) quotedFrom = text.length; };
  const flush = () => {
    if (inToken) tokens.push({ text, quotedFrom });
    text = '';
    quotedFrom = -1;
    inToken = false;
  };
  let i = 0;
  while (i < input.length) {
    const c = input[i];
    if (SEPARATOR.test(c)) { flush(); i++; continue; }
    inToken = true;
    if (c === '"') {
      markQuoted();
      i++;
      for (;;) {
        if (i >= input.length) return { ok: false, message: UNTERMINATED_QUOTE };
        const d = input[i];
        if (d === '"') { i++; break; }
        if (d === '\\' && (input[i + 1] === '"' || input[i + 1] === '\\')) { text += input[i + 1]; i += 2; continue; }
        text += d;
        i++;
      }
      continue;
    }
    if (c === "'") {
      markQuoted();
      const end = input.indexOf("'", i + 1);
      if (end < 0) return { ok: false, message: UNTERMINATED_QUOTE };
      text += input.slice(i + 1, end);
      i = end + 1;
      continue;
    }
    if (c === '\\' && i + 1 < input.length) {
      markQuoted();
      text += input[i + 1];
      i += 2;
      continue;
    }
    text += c;
    i++;
  }
  flush();
  return { ok: true, tokens };
}

/** behaviour.md §5.2 flag shapes. */
const LONG_FLAG = /^--([A-Za-z_][A-Za-z0-9_-]*)(=([\s\S]*))?$/;
const SHORT_FLAG = /^-([A-Za-z])$/;

/** A token read as a flag. */
export interface FlagToken {
  /** `long` for `--name`, `short` for `-x`. */
  kind: 'long' | 'short';
  name: string;
  /** The value of `--name=value`, if that form was used. */
  value?: string;
  /** The flag as written (without any `=value`). */
  raw: string;
}

/**
 * Read a token as a flag (behaviour.md §5.2): only when the flag part was not quoted. For
 * `--name=value`, the value part may be quoted (`--msg="a b"`); a quote anywhere in the name or
 * before the `=` makes the whole token a value.
 */
export function asFlag(t: ArgToken): FlagToken | null {
  const long = LONG_FLAG.exec(t.text);
  if (long) {
    const eq = long[2] !== undefined ? 2 + long[1].length : -1;
    const flagPartEnd = eq >= 0 ? eq + 1 : t.text.length;
    if (t.quotedFrom >= 0 && t.quotedFrom < flagPartEnd) return null;
    return { kind: 'long', name: long[1], raw: `--${long[1]}`, ...(long[2] !== undefined ? { value: long[3] } : {}) };
  }
  const short = SHORT_FLAG.exec(t.text);
  if (short && t.quotedFrom < 0) return { kind: 'short', name: short[1], raw: t.text };
  return null;
}

/** True for the unquoted `--` that ends option processing (behaviour.md §5.2). */
export function isEndOfOptions(t: ArgToken): boolean {
  return t.text === '--' && t.quotedFrom < 0;
}
