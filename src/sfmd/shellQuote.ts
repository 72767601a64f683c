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

/**
 * Substitute the placeholders of a CLI command template. `lookup` returns the value of a known
 * name (fields first, then session variables) or null for unknown names, which stay untouched,
 * as do `{{…}}`, `%{…}`, `${…}` and `$(…)` text.
 */
export function substituteCommand(cmd: string, lookup: (ph: Placeholder) => ShellValue | null): ShellResult {
  const stack: Frame[] = [{ ctx: 'top', depth: 0 }];
  const pending: Heredoc[] = [];
  let out = '';
  let i = 0;
  const top = () => stack[stack.length - 1];
  const unquotedCtx = () => ['top', 'cmdsub', 'arith', 'backtick'].includes(top().ctx);
  const backticks = () => stack.filter((f) => f.ctx === 'backtick').length;
  const layered = (v: string) => { let r = v; for (let k = backticks(); k > 0; k--) r = escapeBacktickLayer(r); return r; };
  while (i < cmd.length) {
    const c = cmd[i];
    const f = top();
    if (c === '{' && !(i > 0 && (cmd[i - 1] === '%' || cmd[i - 1] === '$'))) {
      const dbl = doubleBraceAt(cmd, i);
      if (dbl > 0) { out += cmd.slice(i, i + dbl); i += dbl; continue; }
      const ph = placeholderAt(cmd, i);
      const v = ph && ph.mods.length === 0 ? lookup(ph) : null;
      if (ph && v) {
        if (v.text.includes('\0')) return { ok: false, message: `Value for ${v.label} contains a NUL byte` };
        const quoted = f.ctx === 'dq' ? quoteDouble(v.text) : f.ctx === 'sq' ? quoteSingle(v.text) : f.ctx === 'ansi' ? quoteAnsi(v.text) : quoteUnquoted(v.text);
        out += layered(quoted);
        i += ph.length;
        continue;
      }
    }
    if (f.ctx === 'sq') {
      if (c === "'") stack.pop();
      out += c; i++; continue;
    }
    if (f.ctx === 'ansi') {
      if (c === '\\') { out += cmd.slice(i, i + 2); i += 2; continue; }
      if (c === "'") stack.pop();
      out += c; i++; continue;
    }
    if (c === '\\') { out += cmd.slice(i, i + 2); i += 2; continue; }
    if (c === '$' && cmd[i + 1] === '{') { const n = paramExpansionLength(cmd, i); out += cmd.slice(i, i + n); i += n; continue; }
    if (c === '$' && cmd.startsWith('((', i + 1)) { stack.push({ ctx: 'arith', depth: 0 }); out += '$(('; i += 3; continue; }
    if (c === '$' && cmd[i + 1] === '(') { stack.push({ ctx: 'cmdsub', depth: 0 }); out += '$('; i += 2; continue; }
    if (c === '`') {
      if (f.ctx === 'backtick') stack.pop(); else stack.push({ ctx: 'backtick', depth: 0 });
      out += c; i++; continue;
    }
    if (f.ctx === 'dq') {
      if (c === '"') stack.pop();
      out += c; i++; continue;
    }
    // Unquoted contexts from here on.
    if (c === "'") { stack.push({ ctx: 'sq', depth: 0 }); out += c; i++; continue; }
    if (c === '$' && cmd[i + 1] === "'") { stack.push({ ctx: 'ansi', depth: 0 }); out += "$'"; i += 2; continue; }
    if (c === '"') { stack.push({ ctx: 'dq', depth: 0 }); out += c; i++; continue; }
    if (f.ctx === 'arith' && c === ')' && cmd[i + 1] === ')' && f.depth === 0) { stack.pop(); out += '))'; i += 2; continue; }
    if (f.ctx === 'cmdsub' || f.ctx === 'arith') {
      if (c === '(') f.depth++;
      else if (c === ')') {
        if (f.depth === 0 && f.ctx === 'cmdsub') { stack.pop(); out += c; i++; continue; }
        f.depth = Math.max(0, f.depth - 1);
      }
    }
    if (c === '#' && (i === 0 || WORD_START_BEFORE.test(cmd[i - 1]))) {
      const end = cmd.indexOf('\n', i);
      const stop = end < 0 ? cmd.length : end;
      out += commentText(cmd.slice(i, stop), lookup);
      i = stop;
      continue;
    }
    if (c === '<' && unquotedCtx()) {
      const h = heredocAt(cmd, i);
      if (h) { pending.push(h.doc); out += cmd.slice(i, i + h.length); i += h.length; continue; }
    }
    if (c === '\n' && pending.length > 0) {
      out += c;
      i++;
      const r = heredocBodies(cmd, i, pending.splice(0), lookup);
      if (!r.ok) return r;
      out += r.text;
      i = r.next;
      continue;
    }
    out += c;
    i++;
  }
  return { ok: true, command: out };
}

/** Placeholders in a comment: the value with line breaks flattened, so it cannot end the comment. */
function commentText(text: string, lookup: (ph: Placeholder) => ShellValue | null): string {
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
function heredocBodies(cmd: string, start: number, docs: Heredoc[], lookup: (ph: Placeholder) => ShellValue | null): { ok: true; text: string; next: number } | { ok: false; message: string } {
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
