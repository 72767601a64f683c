import { conditionalWords, SimpleCommand, type Word } from './shellCommands.js';
import { checkValue, expansionFlows, EvalFlows, Refused, type ShellValue } from './shellEval.js';
import { commentText, heredocAt, heredocBodies, paramExpansionLength, type Heredoc } from './shellHeredoc.js';
import { quoteFor } from './shellQuoting.js';
import { doubleBraceAt, placeholderAt, type Placeholder } from './substitute.js';

/**
 * The lexer behind substituteCommand (behaviour.md §4.8). One pass over the template with a stack
 * of contexts: quotes (`'…'`, `"…"`, `$'…'`), command levels (the top, `$( … )`, backticks,
 * `[[ … ]]`) where words and simple commands are tracked, and the arithmetic contexts where bash
 * evaluates text (`$(( ))`, `$[ ]`, `(( ))`, array subscripts). Each placeholder is quoted for its
 * context and reported to the evaluation rule with the word it sits in.
 */

type Ctx = 'top' | 'dq' | 'sq' | 'ansi' | 'cmdsub' | 'backtick' | 'dbrack' | 'arith' | 'arithB' | 'arithCmd' | 'subscript';

const QUOTES = new Set<Ctx>(['dq', 'sq', 'ansi']);
const ARITH = new Set<Ctx>(['arith', 'arithB', 'arithCmd', 'subscript']);

interface Frame {
  ctx: Ctx;
  depth: number;
  /** Template offset just after the opening text. */
  start: number;
  /** Command levels: the word being read, the simple command, the words of `[[`. */
  word: Word | null;
  cmd: SimpleCommand;
  cond: Word[];
  redirectNext: boolean;
}

/** The lookup of a placeholder's value (fields, then session variables), null for unknown names. */
export type Lookup = (ph: Placeholder) => ShellValue | null;

const WORD_START_BEFORE = /[\s;&|()]/;
const REDIRECTION = /^(?:<<<|<>|>>|>\||&>>?|[<>]&?)/;
const IDENT_CHAR = /[A-Za-z0-9_]/;

export class CommandLexer {
  private readonly flows = new EvalFlows();
  private readonly stack: Frame[];
  private readonly pending: Array<{ doc: Heredoc; cmd: SimpleCommand }> = [];
  private out = '';
  private i = 0;

  constructor(private readonly cmd: string, private readonly lookup: Lookup) {
    this.stack = [this.frame0('top', 0)];
  }

  /** The substituted command; throws Refused when a value cannot be inserted safely. */
  run(exported: (name: string) => ShellValue | null): string {
    while (this.i < this.cmd.length) {
      if (this.placeholder()) continue;
      const ctx = this.top.ctx;
      if (ctx === 'sq' || ctx === 'ansi') this.literalQuote();
      else if (ctx === 'dq') { if (!this.expansion()) this.doubleQuote(); }
      else if (!this.unquoted()) this.copy(1);
    }
    for (let k = this.stack.length - 1; k >= 0; k--) this.endCommand(this.stack[k]);
    this.flows.finish(exported);
    return this.out;
  }

  private frame0(ctx: Ctx, start: number): Frame {
    return { ctx, depth: 0, start, word: null, cmd: new SimpleCommand(this.flows), cond: [], redirectNext: false };
  }

  private get top(): Frame { return this.stack[this.stack.length - 1]; }
  private copy(n: number): true { this.out += this.cmd.slice(this.i, this.i + n); this.i += n; return true; }
  private at(text: string): boolean { return this.cmd.startsWith(text, this.i); }
  private isCommandLevel(f: Frame): boolean { return !QUOTES.has(f.ctx) && !ARITH.has(f.ctx); }

  private push(ctx: Ctx, n: number): true {
    const below = this.top;
    // A quote or expansion opened at a command level is part of the word being read there;
    // `[[` and `((` are constructs of their own.
    if (this.isCommandLevel(below) && ctx !== 'dbrack' && ctx !== 'arithCmd') this.ensureWord(below);
    this.copy(n);
    this.stack.push(this.frame0(ctx, this.i));
    return true;
  }

  private pop(n: number): true {
    const f = this.top;
    if (ARITH.has(f.ctx)) this.flows.evaluatedIn(this.cmd.slice(f.start, this.i), 'arith');
    if (f.ctx === 'cmdsub' || f.ctx === 'backtick') this.endCommand(f);
    if (f.ctx === 'dbrack') {
      this.endWord(f);
      conditionalWords(f.cond, this.flows);
    }
    this.stack.pop();
    return this.copy(n);
  }

  private ensureWord(f: Frame): Word {
    f.word ??= { start: this.i, text: '', values: [], redirect: f.redirectNext };
    f.redirectNext = false;
    return f.word;
  }

  private endWord(f: Frame): void {
    const w = f.word;
    if (!w) return;
    f.word = null;
    const word = { ...w, text: this.cmd.slice(w.start, this.i) };
    if (f.ctx === 'dbrack') f.cond.push(word);
    else f.cmd.addWord(word);
  }

  private endCommand(f: Frame): void {
    this.endWord(f);
    f.cmd.end();
    f.cmd = new SimpleCommand(this.flows);
  }

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
    const wordStart = this.isCommandLevel(this.top) && this.top.word === null;
    this.attribute(v);
    this.out += quoteFor(this.bareUnsafe(wordStart, v.text) ? 'word' : this.top.ctx, v.text, this.stack.filter((f) => f.ctx === 'backtick').length);
    this.i += ph.length;
    return true;
  }

  /**
   * Unquoted places where even a bare-safe value must be quoted to stay one plain word: inside
   * `[[ … ]]` (a bare `-e` or `==` would be an operator) and at the start of a word at command start
   * (a bare `a=b` would be an assignment).
   */
  private bareUnsafe(wordStart: boolean, text: string): boolean {
    const f = this.top;
    if (f.ctx === 'dbrack') return true;
    return wordStart && f.cmd.atStart && /^[A-Za-z_][A-Za-z0-9_]*\+?=/.test(text);
  }

  /**
   * Report a value to the evaluation rule: checked at once inside arithmetic; otherwise part of
   * the word being read at each command level below, as the word's own text at the innermost
   * level and as command output (`$( … )`) at the levels further down.
   */
  private attribute(v: ShellValue): void {
    let direct = true;
    for (let k = this.stack.length - 1; k >= 0; k--) {
      const f = this.stack[k];
      if (QUOTES.has(f.ctx)) continue;
      if (ARITH.has(f.ctx)) return checkValue({ v, direct }, 'arith');
      const w = direct ? this.ensureWord(f) : f.word;
      w?.values.push({ v, direct, at: this.i });
      if (f.ctx === 'dbrack') return;
      direct = false;
    }
  }

  /** Inside `'…'` nothing is special; inside `$'…'` only backslash escapes. */
  private literalQuote(): void {
    if (this.top.ctx === 'ansi' && this.at('\\')) this.copy(2);
    else if (this.at("'")) this.pop(1);
    else this.copy(1);
  }

  /** Escapes and expansions that work both unquoted and inside `"…"`. */
  private expansion(): boolean {
    const f = this.top;
    if (this.isCommandLevel(f) && (this.at('\\') || this.at('${'))) this.ensureWord(f);
    if (this.at('\\')) return this.copy(2);
    if (this.at('${')) {
      const n = paramExpansionLength(this.cmd, this.i);
      expansionFlows(this.cmd.slice(this.i, this.i + n), this.flows);
      return this.copy(n);
    }
    if (this.at('$((')) return this.push('arith', 3);
    if (this.at('$[')) return this.push('arithB', 2);
    if (this.at('$(')) return this.push('cmdsub', 2);
    if (this.at('`')) return f.ctx === 'backtick' ? this.pop(1) : this.push('backtick', 1);
    return false;
  }

  private doubleQuote(): void {
    if (this.at('"')) this.pop(1);
    else this.copy(1);
  }

  /** Unquoted contexts: quotes, expansions, then what the context itself gives meaning to. */
  private unquoted(): boolean {
    const c = this.cmd[this.i];
    if (c === "'") return this.push('sq', 1);
    if (this.at("$'")) return this.push('ansi', 2);
    if (c === '"') return this.push('dq', 1);
    if (this.expansion()) return true;
    const f = this.top;
    return ARITH.has(f.ctx) ? this.arithmetic(f, c) : this.commandLevel(f, c);
  }

  /** `$(( ))` / `(( ))` end at `))`, `$[ ]` and subscripts at `]`, each with its own nesting. */
  private arithmetic(f: Frame, c: string): boolean {
    const [open, close] = f.ctx === 'arithB' || f.ctx === 'subscript' ? ['[', ']'] : ['(', ')'];
    if (close === ')' && this.at('))') && f.depth === 0) return this.pop(2);
    if (close === ']' && c === ']' && f.depth === 0) return this.pop(1);
    if (c === open) f.depth++;
    else if (c === close) f.depth = Math.max(0, f.depth - 1);
    return this.copy(1);
  }

  /** Words, command separators, redirections, comments, here-documents and the evaluating constructs. */
  private commandLevel(f: Frame, c: string): boolean {
    const wordStart = f.word === null;
    if (c === ' ' || c === '\t') { this.endWord(f); return this.copy(1); }
    if (c === '\n') return this.newline(f);
    if (f.ctx === 'dbrack') return this.conditional(f, c, wordStart);
    if (c === ';' || c === '&' || c === '|') { this.endCommand(f); return this.copy(1); }
    if (c === ')' && f.ctx === 'cmdsub' && f.depth === 0) return this.pop(1);
    if (wordStart && this.at('((') && (f.cmd.atStart || (f.cmd.command === 'for' && f.cmd.argCount === 0))) return this.push('arithCmd', 2);
    if (c === '(' || c === ')') {
      if (f.ctx === 'cmdsub') f.depth = Math.max(0, f.depth + (c === '(' ? 1 : -1));
      this.endCommand(f);
      return this.copy(1);
    }
    if (wordStart && this.at('[[') && f.cmd.atStart && /[\s]/.test(this.cmd[this.i + 2] ?? ' ')) return this.push('dbrack', 2);
    if (c === '#' && wordStart && (this.i === 0 || WORD_START_BEFORE.test(this.cmd[this.i - 1]))) return this.comment();
    if (c === '<' || c === '>' || (c === '&' && this.cmd[this.i + 1] === '>')) return this.redirection(f);
    if (c === '[' && !wordStart && IDENT_CHAR.test(this.cmd[this.i - 1] ?? '')) return this.push('subscript', 1);
    this.ensureWord(f);
    return this.copy(1);
  }

  /** Inside `[[ … ]]`: words end at blanks and at the operators `( ) ! && ||`; `]]` closes it. */
  private conditional(f: Frame, c: string, wordStart: boolean): boolean {
    if (wordStart && this.at(']]')) return this.pop(2);
    const op = /^(?:&&|\|\||[()!])/.exec(this.cmd.slice(this.i, this.i + 2))?.[0];
    if (op && (op !== '!' || wordStart)) {
      this.endWord(f);
      f.cond.push({ start: this.i, text: op, values: [], redirect: false });
      return this.copy(op.length);
    }
    this.ensureWord(f);
    return this.copy(1);
  }

  private newline(f: Frame): boolean {
    this.endCommand(f);
    this.copy(1);
    if (this.pending.length === 0) return true;
    const docs = this.pending.splice(0);
    const r = heredocBodies(this.cmd, this.i, docs.map((d) => d.doc), this.lookup);
    if (!r.ok) throw new Refused(r.message);
    docs.forEach((d, k) => d.cmd.stdin.push(...r.values[k].map((v) => ({ v, direct: true }))));
    this.out += r.text;
    this.i = r.next;
    return true;
  }

  /** A redirection operator; a here-document is queued, the next word is the redirection's target. */
  private redirection(f: Frame): boolean {
    this.endWord(f);
    const h = this.cmd[this.i] === '<' ? heredocAt(this.cmd, this.i) : null;
    if (h) {
      this.pending.push({ doc: h.doc, cmd: f.cmd });
      return this.copy(h.length);
    }
    const op = REDIRECTION.exec(this.cmd.slice(this.i, this.i + 3))?.[0] ?? this.cmd[this.i];
    f.redirectNext = true;
    return this.copy(op.length);
  }

  private comment(): true {
    const nl = this.cmd.indexOf('\n', this.i);
    const stop = nl < 0 ? this.cmd.length : nl;
    this.out += commentText(this.cmd.slice(this.i, stop), this.lookup);
    this.i = stop;
    return true;
  }
}
