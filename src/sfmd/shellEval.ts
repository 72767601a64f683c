/**
 * The evaluation rule of CLI actions (behaviour.md §4.8).
 *
 * Quoting makes bash see exactly the value as one word. But bash reads some words a second time:
 * as an arithmetic expression (`$(( ))`, `$[ ]`, `(( ))`, `let`, array subscripts, the operands of
 * `[[ -eq ]]`, `declare -i`) or as a variable name (`[[ -v ]]`, `printf -v`, `read`, `declare`
 * names, `${!x}`). There an array subscript inside the text is expanded again, so
 * `a[$(touch /tmp/x)]` runs its command whatever the quotes (`$(( "$n" ))` included). No quoting
 * can protect such a place, so the value itself is checked:
 *
 * - a placeholder whose own text is evaluated must be a number (arithmetic) or a plain variable
 *   name (name places);
 * - a placeholder whose text reaches an evaluation only through a command's output (a `$( )` in an
 *   arithmetic context, or a variable assigned from one) may not contain `[`, the one character
 *   through which an evaluation can run a command.
 *
 * Values also reach evaluations through variables: `n={n}; echo $((n + 1))` assigns the value and
 * evaluates it later; `for`, `read` and `printf -v` assign too, and an exported session variable
 * `$name` is such a variable. The lexer reports assignments and evaluated names here and `finish`
 * applies the same checks to every value that flows into an evaluated name.
 */

/** A value to insert for a placeholder, with the label used in error messages (`--f` or `{v}`). */
export interface ShellValue {
  text: string;
  label: string;
}

/** A placeholder's value in a word: `direct` when the word holds its text, not a command's output. */
export interface PlacedValue {
  v: ShellValue;
  direct: boolean;
}

/** What bash does with an evaluated text: arithmetic, or a variable name. */
export type EvalUse = 'arith' | 'name';

/** A value that cannot be inserted safely; reported as INVALID_ARGS by the caller. */
export class Refused extends Error {}

/** behaviour.md §4.4 `number` syntax, plus hexadecimal integers bash arithmetic also reads. */
const NUMBER_RE = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$|^[+-]?0[xX][0-9A-Fa-f]+$/;
const NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Identifiers (bare, `$x`, `${x`) and positional parameters (`$1`, `${1`, `$@`, `$*`) in evaluated text. */
const IDENT_RE = /(?<![A-Za-z0-9_])(?:\$\{?)?([A-Za-z_][A-Za-z0-9_]*)|\$\{?([0-9@*])/g;
const PLACEHOLDER_TEXT_RE = /\{[A-Za-z_][A-Za-z0-9_-]*(?:\[\d+\])?\}/g;

/** Check one value for the place it lands in; throws Refused. */
export function checkValue(p: PlacedValue, use: EvalUse): void {
  const { text, label } = p.v;
  if (!p.direct) {
    if (text.includes('[')) throw new Refused(`Value for ${label} may not contain "[" here: bash evaluates text made from it as ${use === 'arith' ? 'arithmetic' : 'a variable name'}`);
    return;
  }
  if (use === 'arith' && !NUMBER_RE.test(text)) throw new Refused(`Value for ${label} is not a number; the command uses it in arithmetic`);
  if (use === 'name' && !NAME_RE.test(text)) throw new Refused(`Value for ${label} is not a variable name; the command uses it as one`);
}

/**
 * Collects what the lexer saw: values assigned to variables, names that are evaluated, values in
 * command arguments (for `$1` in an evaluation); `finish` checks the flows.
 */
export class EvalFlows {
  private readonly assigned = new Map<string, PlacedValue[]>();
  private readonly evaluated = new Map<string, EvalUse>();
  private readonly argValues: PlacedValue[] = [];
  private positional: EvalUse | null = null;
  private readonly deferred: Array<() => void> = [];

  /** Work to do once every word is known (a here-document body arrives after its command ended). */
  later(fn: () => void): void {
    this.deferred.push(fn);
  }

  /** Values stored into variable `name` (assignment words, `for`, `read`, `printf -v`). */
  assign(name: string, values: PlacedValue[]): void {
    if (values.length === 0) return;
    const list = this.assigned.get(name) ?? [];
    list.push(...values);
    this.assigned.set(name, list);
  }

  /** Values passed as command arguments (they become `$1`… of a function or `set --`). */
  args(values: PlacedValue[]): void {
    this.argValues.push(...values);
  }

  /** The identifiers and positional parameters of an evaluated text. */
  evaluatedIn(text: string, use: EvalUse): void {
    for (const m of text.replace(PLACEHOLDER_TEXT_RE, ' ').matchAll(IDENT_RE)) this.evaluate(m[1] ?? m[2], use);
  }

  /** One evaluated name; arithmetic is the stricter use and wins. */
  evaluate(name: string, use: EvalUse): void {
    if (/^[0-9@*]$/.test(name)) {
      this.positional = this.positional === 'arith' ? 'arith' : use;
      return;
    }
    if (this.evaluated.get(name) !== 'arith') this.evaluated.set(name, use);
  }

  /** Check every value that flows into an evaluated name; `exported` gives session variables `$name`. */
  finish(exported: (name: string) => ShellValue | null): void {
    for (const fn of this.deferred.splice(0)) fn();
    for (const [name, use] of this.evaluated) {
      for (const p of this.assigned.get(name) ?? []) checkValue(p, use);
      const session = exported(name);
      if (session) checkValue({ v: session, direct: true }, use);
    }
    if (this.positional) for (const p of this.argValues) checkValue(p, this.positional);
  }
}

/**
 * The evaluated parts of a `${…}` expansion (copied untouched by the lexer): `${!x}` evaluates x's
 * value as a name, `${a[i]}` its subscript and `${x:off:len}` its offsets as arithmetic.
 */
export function expansionFlows(text: string, flows: EvalFlows): void {
  const m = /^\$\{([!#]?)([A-Za-z_][A-Za-z0-9_]*|[0-9@*])(.*)\}$/s.exec(text);
  if (!m) return;
  const [, prefix, name, rest] = m;
  if (prefix === '!') flows.evaluate(name, 'name');
  let tail = rest;
  if (tail.startsWith('[')) {
    const close = tail.indexOf(']');
    const sub = close < 0 ? tail.slice(1) : tail.slice(1, close);
    if (sub !== '@' && sub !== '*') flows.evaluatedIn(sub, 'arith');
    tail = close < 0 ? '' : tail.slice(close + 1);
  }
  if (tail.startsWith(':') && !/^:[-=?+]/.test(tail)) flows.evaluatedIn(tail.slice(1), 'arith');
}
