import { doubleBraceAt, placeholderAt, type Placeholder } from './substitute.js';

/**
 * The CLI quoting rule of behaviour.md §4.8: each `{field}`/`{var}` placeholder becomes text that
 * makes bash see exactly the value, whatever quoting the template put around it. A small lexer
 * tracks the context of every placeholder: unquoted, `"…"`, `'…'`, `$'…'`, `$( … )`, `$(( … ))`,
 * backticks, `${…}` (copied untouched), comments and here-document bodies.
 */

/** A value to insert for a placeholder, with the label used in error messages (`--f` or `{v}`). */
export interface ShellValue {
  text: string;
  label: string;
}

/** The outcome of substituting a command template. */
export type ShellResult = { ok: true; command: string } | { ok: false; message: string };

type Ctx = 'top' | 'dq' | 'sq' | 'ansi' | 'cmdsub' | 'arith' | 'backtick';

interface Frame {
  ctx: Ctx;
  depth: number;
}

interface Heredoc {
  delim: string;
  quoted: boolean;
  stripTabs: boolean;
}

const SAFE_BARE = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** behaviour.md §4.8 unquoted context: bare when safe, else single-quoted; empty → `''`. */
export function quoteUnquoted(v: string): string {
  if (v === '') return "''";
  if (SAFE_BARE.test(v)) return v;
  return `'${v.replace(/'/g, `'\\''`)}'`;
}

/** Inside `"…"`: `\`, `"`, `$` and backtick each prefixed by `\`. */
export function quoteDouble(v: string): string {
  return v.replace(/[\\"$`]/g, (c) => `\\${c}`);
}

/** Inside `'…'`: each `'` → `'\''`. */
export function quoteSingle(v: string): string {
  return v.replace(/'/g, `'\\''`);
}

/** Inside `$'…'`: `\` → `\\`, `'` → `\'`. */
export function quoteAnsi(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/'/g, "\\'");
}

/** One backtick level: the outer shell removes a backslash before `\`, `` ` `` and `$`. */
function escapeBacktickLayer(v: string): string {
  return v.replace(/[\\`$]/g, (c) => `\\${c}`);
}

const WORD_START_BEFORE = /[\s;&|()]/;
const DELIM_END = /[\s;&|<>()]/;

/** Parse a here-document operator at `cmd[i]` (`<<`, not `<<<`); returns its spec and length. */
function heredocAt(cmd: string, i: number): { doc: Heredoc; length: number } | null {
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
function paramExpansionLength(cmd: string, i: number): number {
  let depth = 0;
  for (let j = i + 1; j < cmd.length; j++) {
    if (cmd[j] === '\\') { j++; continue; }
    if (cmd[j] === '{') depth++;
    else if (cmd[j] === '}' && --depth === 0) return j + 1 - i;
  }
  return cmd.length - i;
}

type Lookup = (ph: Placeholder) => ShellValue | null;

/** A value that cannot be inserted safely; reported as INVALID_ARGS by the caller. */
class Refused extends Error {}

/** Quote a value for the context it lands in (behaviour.md §4.8 table), plus one escaping level per enclosing backtick. */
function quoteFor(ctx: Ctx, v: string, backtickLevels: number): string {
  let r = ctx === 'dq' ? quoteDouble(v) : ctx === 'sq' ? quoteSingle(v) : ctx === 'ansi' ? quoteAnsi(v) : quoteUnquoted(v);
  for (let k = backtickLevels; k > 0; k--) r = escapeBacktickLayer(r);
  return r;
}

/** The lexer behind substituteCommand: one pass over the template, a stack of quoting contexts. */
class CommandLexer {
  private readonly stack: Frame[] = [{ ctx: 'top', depth: 0 }];
  private readonly pending: Heredoc[] = [];
  private out = '';
  private i = 0;

  constructor(private readonly cmd: string, private readonly lookup: Lookup) {}

  run(): string {
    while (this.i < this.cmd.length) {
      if (this.placeholder() || this.literalQuote() || this.expansion() || this.doubleQuote() || this.unquoted()) continue;
      this.copy(1);
    }
    return this.out;
  }

  private get frame(): Frame { return this.stack[this.stack.length - 1]; }
  private copy(n: number): true { this.out += this.cmd.slice(this.i, this.i + n); this.i += n; return true; }
  private push(ctx: Ctx, n: number): true { this.stack.push({ ctx, depth: 0 }); return this.copy(n); }
  private pop(n: number): true { this.stack.pop(); return this.copy(n); }
  private at(text: string): boolean { return this.cmd.startsWith(text, this.i); }

  /** `{name}` / `{name[N]}` of a known name; `{{…}}`, `%{…}` and `${…}` never are. */
  private placeholder(): boolean {
    const { cmd, i } = this;
    if (cmd[i] !== '{' || (i > 0 && (cmd[i - 1] === '%' || cmd[i - 1] === '$'))) return false;
    const dbl = doubleBraceAt(cmd, i);
    if (dbl > 0) return this.copy(dbl);
    const ph = placeholderAt(cmd, i);
    const v = ph && ph.mods.length === 0 ? this.lookup(ph) : null;
    if (!ph || !v) return false;
    if (v.text.includes('\0')) throw new Refused(`Value for ${v.label} contains a NUL byte`);
    this.out += quoteFor(this.frame.ctx, v.text, this.stack.filter((f) => f.ctx === 'backtick').length);
    this.i += ph.length;
    return true;
  }

  /** Inside `'…'` nothing is special; inside `$'…'` only backslash escapes. */
  private literalQuote(): boolean {
    const ctx = this.frame.ctx;
    if (ctx !== 'sq' && ctx !== 'ansi') return false;
    if (ctx === 'ansi' && this.at('\\')) return this.copy(2);
    return this.at("'") ? this.pop(1) : this.copy(1);
  }

  /** Escapes and expansions that work both unquoted and inside `"…"`. */
  private expansion(): boolean {
    if (this.at('\\')) return this.copy(2);
    if (this.at('${')) return this.copy(paramExpansionLength(this.cmd, this.i));
    if (this.at('$((')) return this.push('arith', 3);
    if (this.at('$(')) return this.push('cmdsub', 2);
    if (this.at('`')) return this.frame.ctx === 'backtick' ? this.pop(1) : this.push('backtick', 1);
    return false;
  }

  private doubleQuote(): boolean {
    if (this.frame.ctx !== 'dq') return false;
    return this.at('"') ? this.pop(1) : this.copy(1);
  }

  /** Unquoted contexts: quotes, parentheses of `$(…)`/`$((…))`, comments, here-documents. */
  private unquoted(): boolean {
    const f = this.frame;
    const c = this.cmd[this.i];
    if (c === "'") return this.push('sq', 1);
    if (this.at("$'")) return this.push('ansi', 2);
    if (c === '"') return this.push('dq', 1);
    if (f.ctx === 'arith' && this.at('))') && f.depth === 0) return this.pop(2);
    if ((f.ctx === 'cmdsub' || f.ctx === 'arith') && (c === '(' || c === ')')) {
      if (c === ')' && f.depth === 0 && f.ctx === 'cmdsub') return this.pop(1);
      f.depth = Math.max(0, f.depth + (c === '(' ? 1 : -1));
      return this.copy(1);
    }
    if (c === '#' && (this.i === 0 || WORD_START_BEFORE.test(this.cmd[this.i - 1]))) {
      const nl = this.cmd.indexOf('\n', this.i);
      const stop = nl < 0 ? this.cmd.length : nl;
      this.out += commentText(this.cmd.slice(this.i, stop), this.lookup);
      this.i = stop;
      return true;
    }
    if (c === '<') {
      const h = heredocAt(this.cmd, this.i);
      if (!h) return false;
      this.pending.push(h.doc);
      return this.copy(h.length);
    }
    if (c === '\n' && this.pending.length > 0) {
      this.copy(1);
      const r = heredocBodies(this.cmd, this.i, this.pending.splice(0), this.lookup);
      if (!r.ok) throw new Refused(r.message);
      this.out += r.text;
      this.i = r.next;
      return true;
    }
    return false;
  }
}

/**
 * Substitute the placeholders of a CLI command template. `lookup` returns the value of a known
 * name (fields first, then session variables) or null for unknown names, which stay untouched,
 * as do `{{…}}`, `%{…}`, `${…}` and `$(…)` text.
 */
export function substituteCommand(cmd: string, lookup: Lookup): ShellResult {
  try {
    return { ok: true, command: new CommandLexer(cmd, lookup).run() };
  } catch (err) {
    if (err instanceof Refused) return { ok: false, message: err.message };
    throw err;
  }
}

/** Placeholders in a comment: the value with line breaks flattened, so it cannot end the comment. */
function commentText(text: string, lookup: Lookup): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const dbl = doubleBraceAt(text, i);
    if (dbl > 0) { out += text.slice(i, i + dbl); i += dbl - 1; continue; }
    const ph = text[i] === '{' ? placeholderAt(text, i) : null;
    const v = ph && ph.mods.length === 0 ? lookup(ph) : null;
    if (ph && v) { out += v.text.replace(/[\r\n]/g, ' '); i += ph.length - 1; continue; }
    out += text[i];
  }
  return out;
}

/**
 * Copy here-document bodies starting at `cmd[start]`, substituting placeholders (behaviour.md
 * §4.8): unquoted delimiter → `\`, `$`, backtick escaped; quoted → raw. A value line equal to the
 * delimiter would end the document early, so it is refused in both forms.
 */
function heredocBodies(cmd: string, start: number, docs: Heredoc[], lookup: Lookup): { ok: true; text: string; next: number } | { ok: false; message: string } {
  let i = start;
  let out = '';
  for (const doc of docs) {
    for (;;) {
      if (i >= cmd.length) break;
      const nl = cmd.indexOf('\n', i);
      const lineEnd = nl < 0 ? cmd.length : nl;
      const line = cmd.slice(i, lineEnd);
      const cmp = doc.stripTabs ? line.replace(/^\t+/, '') : line;
      if (cmp === doc.delim) { out += line + (nl < 0 ? '' : '\n'); i = nl < 0 ? cmd.length : nl + 1; break; }
      let rendered = '';
      for (let k = 0; k < line.length; k++) {
        const dbl = doubleBraceAt(line, k);
        if (dbl > 0) { rendered += line.slice(k, k + dbl); k += dbl - 1; continue; }
        const ph = line[k] === '{' ? placeholderAt(line, k) : null;
        const v = ph && ph.mods.length === 0 ? lookup(ph) : null;
        if (ph && v) {
          if (v.text.includes('\0')) return { ok: false, message: `Value for ${v.label} contains a NUL byte` };
          const ends = v.text.split('\n').some((l) => (doc.stripTabs ? l.replace(/^\t+/, '') : l) === doc.delim);
          if (ends) return { ok: false, message: `Value for ${v.label} would end the here-document` };
          rendered += doc.quoted ? v.text : v.text.replace(/[\\$`]/g, (ch) => `\\${ch}`);
          k += ph.length - 1;
          continue;
        }
        rendered += line[k];
      }
      out += rendered + (nl < 0 ? '' : '\n');
      i = nl < 0 ? cmd.length : nl + 1;
    }
  }
  return { ok: true, text: out, next: i };
}

/** Names referenced as `$name` / `${name}` anywhere in a command (for exporting session variables, §4.8). */
export function referencedNames(cmd: string): Set<string> {
  const names = new Set<string>();
  for (const m of cmd.matchAll(/\$(?:\{([A-Za-z_][A-Za-z0-9_]*)[}:#%/^,@-]|([A-Za-z_][A-Za-z0-9_]*))/g)) names.add(m[1] ?? m[2]);
  return names;
}
