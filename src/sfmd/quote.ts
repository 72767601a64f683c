/**
 * Quoted-string reading shared by the first-line and parameter-line grammars
 * (behaviour.md §4.2 `quoted`, §4.4 `description` and `default`).
 */

/** A value read from the start of a text, and how many characters it used. */
export interface Read {
  value: string;
  length: number;
}

/**
 * Read `"…"` (with `\"` and `\\` escapes; other backslashes literal) or `'…'` (no escapes) at the
 * start of `text`. Returns null when `text` does not start with a quote or the quote is unterminated.
 */
export function readQuoted(text: string): Read | null {
  const q = text[0];
  if (q === "'") {
    const end = text.indexOf("'", 1);
    return end < 0 ? null : { value: text.slice(1, end), length: end + 1 };
  }
  if (q !== '"') return null;
  let out = '';
  for (let i = 1; i < text.length; i++) {
    const c = text[i];
    if (c === '\\' && (text[i + 1] === '"' || text[i + 1] === '\\')) {
      out += text[i + 1];
      i++;
    } else if (c === '"') {
      return { value: out, length: i + 1 };
    } else {
      out += c;
    }
  }
  return null;
}

/** Read a quoted value or, failing that, a run of non-whitespace characters. */
export function readWord(text: string): Read | null {
  const quoted = readQuoted(text);
  if (quoted) return quoted;
  if (text[0] === '"' || text[0] === "'") return null;
  const m = /^\S+/.exec(text);
  return m ? { value: m[0], length: m[0].length } : null;
}

/** Leading whitespace length of `text`. */
export function wsLength(text: string): number {
  return /^\s*/.exec(text)?.[0].length ?? 0;
}
