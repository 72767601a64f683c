import { Refused, type ShellValue } from './shellEval.js';
import { doubleBraceAt, placeholderAt, type Placeholder } from './substitute.js';

/**
 * The parts of a CLI command template the lexer copies as blocks (behaviour.md §4.8): here-document
 * operators and bodies, comments and `${…}` parameter expansions.
 */

/** A here-document waiting for its body. */
export interface Heredoc {
  delim: string;
  quoted: boolean;
  stripTabs: boolean;
}

type Lookup = (ph: Placeholder) => ShellValue | null;

const DELIM_END = /[\s;&|<>()]/;

/** Parse a here-document operator at `cmd[i]` (`<<`, not `<<<`); returns its spec and length. */
export function heredocAt(cmd: string, i: number): { doc: Heredoc; length: number } | null {
  if (!cmd.startsWith('<<', i) || cmd[i + 2] === '<') return null;
  let j = i + 2;
  const stripTabs = cmd[j] === '-';
  if (stripTabs) j++;
  while (cmd[j] === ' ' || cmd[j] === '\t') j++;
  let delim = '';
  let quoted = false;
  while (j < cmd.length && !DELIM_END.test(cmd[j])) {
    const c = cmd[j];
    if (c === "'" || c === '"') {
      const end = cmd.indexOf(c, j + 1);
      if (end < 0) return null;
      delim += cmd.slice(j + 1, end);
      quoted = true;
      j = end + 1;
      continue;
    }
    if (c === '\\') { quoted = true; delim += cmd[j + 1] ?? ''; j += 2; continue; }
    delim += c;
    j++;
  }
  if (delim === '') return null;
  return { doc: { delim, quoted, stripTabs }, length: j - i };
}

/** Length of a `${…}` parameter expansion at `cmd[i]`, copied untouched (bash expands it). */
export function paramExpansionLength(cmd: string, i: number): number {
  let depth = 0;
  for (let j = i + 1; j < cmd.length; j++) {
    if (cmd[j] === '\\') { j++; continue; }
    if (cmd[j] === '{') depth++;
    else if (cmd[j] === '}' && --depth === 0) return j + 1 - i;
  }
  return cmd.length - i;
}

/**
 * `text` with each modifier-free placeholder that `lookup` knows replaced by `render(value)`, which
 * may throw Refused; `{{…}}` stays as written. A value with a NUL byte is refused.
 */
function replaceValues(text: string, lookup: Lookup, render: (v: ShellValue) => string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const dbl = doubleBraceAt(text, i);
    if (dbl > 0) { out += text.slice(i, i + dbl); i += dbl - 1; continue; }
    const ph = text[i] === '{' ? placeholderAt(text, i) : null;
    const v = ph && ph.mods.length === 0 ? lookup(ph) : null;
    if (ph && v) {
      if (v.text.includes('\0')) throw new Refused(`Value for ${v.label} contains a NUL byte`);
      out += render(v);
      i += ph.length - 1;
      continue;
    }
    out += text[i];
  }
  return out;
}

/** Placeholders in a comment: the value with line breaks flattened, so it cannot end the comment; NUL is refused. */
export function commentText(text: string, lookup: Lookup): string {
  return replaceValues(text, lookup, (v) => v.text.replace(/[\r\n]/g, ' '));
}

/** One body line with its placeholders substituted, or the reason it cannot be. */
function bodyLine(line: string, doc: Heredoc, lookup: Lookup, values: ShellValue[]): string | { refused: string } {
  try {
    return replaceValues(line, lookup, (v) => {
      const ends = v.text.split('\n').some((l) => (doc.stripTabs ? l.replace(/^\t+/, '') : l) === doc.delim);
      if (ends) throw new Refused(`Value for ${v.label} would end the here-document`);
      values.push(v);
      return doc.quoted ? v.text : v.text.replace(/[\\$`]/g, (ch) => `\\${ch}`);
    });
  } catch (err) {
    if (err instanceof Refused) return { refused: err.message };
    throw err;
  }
}

/**
 * Copy here-document bodies starting at `cmd[start]`, substituting placeholders (behaviour.md
 * §4.8): unquoted delimiter → `\`, `$`, backtick escaped; quoted → raw. A value line equal to the
 * delimiter would end the document early, so it is refused in both forms. `values` lists, per
 * document, the values its body received (they are the input of the command).
 */
export function heredocBodies(cmd: string, start: number, docs: Heredoc[], lookup: Lookup): { ok: true; text: string; next: number; values: ShellValue[][] } | { ok: false; message: string } {
  let i = start;
  let out = '';
  const values: ShellValue[][] = [];
  for (const doc of docs) {
    const got: ShellValue[] = [];
    values.push(got);
    while (i < cmd.length) {
      const nl = cmd.indexOf('\n', i);
      const lineEnd = nl < 0 ? cmd.length : nl;
      const line = cmd.slice(i, lineEnd);
      const cmp = doc.stripTabs ? line.replace(/^\t+/, '') : line;
      const end = nl < 0 ? cmd.length : nl + 1;
      if (cmp === doc.delim) { out += cmd.slice(i, end); i = end; break; }
      const rendered = bodyLine(line, doc, lookup, got);
      if (typeof rendered !== 'string') return { ok: false, message: rendered.refused };
      out += rendered + (nl < 0 ? '' : '\n');
      i = end;
    }
  }
  return { ok: true, text: out, next: i, values };
}
