import { checkValue, type EvalFlows, type PlacedValue } from './shellEval.js';

/**
 * Simple commands and `[[ … ]]` words as the CLI lexer finishes them, and the builtins that make
 * bash evaluate a word a second time (behaviour.md §4.8 evaluation rule).
 */

/** A finished word: its template text and the placeholder values inside it (with template offsets). */
export interface Word {
  start: number;
  text: string;
  values: Array<PlacedValue & { at: number }>;
  /** The word is the target of a redirection (`> f`, `<<< text`), not an argument. */
  redirect: boolean;
}

const NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
const ASSIGNMENT_RE = /^([A-Za-z_][A-Za-z0-9_]*)(?:\[[^\]]*\])?\+?=/;
/** Reserved words after which a command still has to start. */
const KEEP_START = new Set(['!', '{', '}', 'then', 'do', 'else', 'elif', 'if', 'while', 'until', 'time', 'fi', 'done', 'esac']);
/** Builtins that declare variables: option `-i` makes values arithmetic, `-n` makes them names. */
const DECLARERS = new Set(['declare', 'typeset', 'local', 'export', 'readonly']);
/** Options of `read` that take an argument (the next word, when the letter ends the option word). */
const READ_ARG_OPTIONS = 'adinNptu';
const ARITH_TESTS = new Set(['-eq', '-ne', '-lt', '-le', '-gt', '-ge']);
const NAME_TESTS = new Set(['-v', '-R']);

/** The values of a word that stand after template offset `from` (the value part of `name=value`). */
const after = (w: Word, from: number) => w.values.filter((v) => v.at >= w.start + from);

/** One simple command: its name, its argument words, and the variables it assigns. */
export class SimpleCommand {
  private name: string | null = null;
  private readonly words: Word[] = [];
  private opts = '';
  private forVar: string | null = null;
  private forIn = false;
  private readArg: string | null = null;
  private readonly targets: string[] = [];
  /** Here-document bodies fed to this command (their values flow like a here-string's). */
  readonly stdin: PlacedValue[] = [];

  constructor(private readonly flows: EvalFlows) {}

  /** No command word yet: the next word may be an assignment, `[[` or `((`. */
  get atStart(): boolean {
    return this.name === null;
  }

  /** The command word, once read. */
  get command(): string | null {
    return this.name;
  }

  /** Arguments read so far. */
  get argCount(): number {
    return this.words.filter((w) => !w.redirect).length;
  }

  addWord(w: Word): void {
    if (w.redirect) {
      this.words.push(w);
      return;
    }
    if (this.name === null) {
      if (KEEP_START.has(w.text)) return;
      const m = ASSIGNMENT_RE.exec(w.text);
      if (m) this.flows.assign(m[1], after(w, m[0].length));
      else this.name = w.text;
      return;
    }
    const prev = this.words.filter((x) => !x.redirect).at(-1)?.text;
    this.words.push(w);
    this.flows.args(w.values);
    this.argumentRules(w, prev);
  }

  private argumentRules(w: Word, prev: string | undefined): void {
    const name = this.name as string;
    if (name === 'let') evaluated(w, 'arith', this.flows);
    else if (DECLARERS.has(name)) this.declared(w);
    else if (name === 'read') this.readWord(w);
    else if ((name === 'printf' && prev === '-v') || (name === 'wait' && prev === '-p')) this.target(w);
    else if ((name === 'test' || name === '[') && prev === '-v') evaluated(w, 'name', this.flows);
    else if (name === 'for') this.forWord(w);
  }

  /** `declare [-opts] name[=value]`: the name part is a name; `-i` values are arithmetic, `-n` values names. */
  private declared(w: Word): void {
    if (/^[-+]/.test(w.text)) {
      this.opts += w.text;
      return;
    }
    const eq = w.text.indexOf('=');
    const namePart = eq < 0 ? w.text : w.text.slice(0, eq).replace(/\+$/, '');
    for (const v of w.values.filter((x) => eq < 0 || x.at < w.start + eq)) checkValue(v, 'name');
    const name = namePart.replace(/\[.*$/s, '');
    if (!NAME_RE.test(name)) return;
    const use = this.opts.includes('i') ? 'arith' : this.opts.includes('n') ? 'name' : null;
    // An integer or nameref variable evaluates every value later assigned to it, too.
    if (use) this.flows.evaluate(name, use);
    if (eq < 0) return;
    const values = after(w, eq + 1);
    this.flows.assign(name, values);
    if (use) evaluated({ ...w, text: w.text.slice(eq + 1), values }, use, this.flows);
  }

  /** `read [-opts] name…`: names are names and receive the input (a here-string, a here-document). */
  private readWord(w: Word): void {
    if (this.readArg !== null) {
      const letter = this.readArg;
      this.readArg = null;
      if (letter === 'a') this.target(w);
      return;
    }
    if (/^-[A-Za-z]+$/.test(w.text)) {
      const last = w.text[w.text.length - 1];
      if (READ_ARG_OPTIONS.includes(last)) this.readArg = last;
      return;
    }
    this.target(w);
  }

  /** A word that names a variable this command assigns (`read x`, `printf -v x`, `wait -p x`). */
  private target(w: Word): void {
    for (const v of w.values) checkValue(v, 'name');
    if (NAME_RE.test(w.text)) this.targets.push(w.text);
  }

  /** `for name in words`: the loop variable receives each word. */
  private forWord(w: Word): void {
    if (this.forVar === null && !this.forIn && NAME_RE.test(w.text)) this.forVar = w.text;
    else if (w.text === 'in' && !this.forIn) this.forIn = true;
    else if (this.forIn && this.forVar) this.flows.assign(this.forVar, w.values);
  }

  /** The command ended: what `read`/`printf -v` store comes from its other words and its input. */
  end(): void {
    if (this.targets.length === 0) return;
    const targets = [...this.targets];
    this.flows.later(() => {
      const values = [...this.words.flatMap((w) => w.values), ...this.stdin];
      for (const t of targets) this.flows.assign(t, values);
    });
  }
}

/** A word bash evaluates: each value is checked, and the names it mentions are evaluated too. */
function evaluated(w: Pick<Word, 'text' | 'values'>, use: 'arith' | 'name', flows: EvalFlows): void {
  for (const v of w.values) checkValue(v, use);
  flows.evaluatedIn(w.text, use);
}

/**
 * The words of a `[[ … ]]`: the operands of `-eq`… are arithmetic, the operand of `-v`/`-R` a name;
 * string and file tests leave their operands alone.
 */
export function conditionalWords(words: Word[], flows: EvalFlows): void {
  words.forEach((w, k) => {
    const prev = words[k - 1]?.text;
    const next = words[k + 1]?.text;
    if (ARITH_TESTS.has(prev ?? '') || ARITH_TESTS.has(next ?? '')) evaluated(w, 'arith', flows);
    else if (NAME_TESTS.has(prev ?? '')) evaluated(w, 'name', flows);
  });
}
