import type { CommandCode } from '../domain/result.js';
import type { ShortcutValue } from '../domain/session.js';
import { FIELD_FILE_BYTES } from '../domain/limits.js';
import { fromShortcut, normalise, normaliseDefault, isBooleanLiteral, type FieldValue } from './fieldValues.js';
import { substituteVars, unresolvedDollars } from './substitute.js';
import { asFlag, isEndOfOptions, tokenize, type ArgToken } from './tokenize.js';
import type { ActionDef, FieldDef } from './types.js';

/**
 * The binding procedure of behaviour.md §5.3–5.4: argument text → field values. Pure apart from
 * the injected readers (shortcuts, variables, field files).
 */

/** What `--<f>-file` reading reports (behaviour.md §5.4); the reader applies `~`, home and the workspace policy. */
export type FieldFileRead =
  | { ok: true; data: Buffer; display: string }
  | { ok: false; kind: 'forbidden' | 'unreadable' | 'tooLarge'; display: string; reason?: string; size?: number };

/** The world binding may consult. */
export interface BindContext {
  /** Agent home (path values). */
  home: string;
  /** Session variables. */
  vars: ReadonlyMap<string, string>;
  /** Value shortcuts first, then page shortcuts (behaviour.md §3.7). */
  shortcut(name: string): ShortcutValue | undefined;
  /** Known shortcut names (without `@`) for the NOT_FOUND detail. */
  knownShortcuts(): string[];
  /** `$NAME` in a caller's value: the env store cascade only (§5.3 step 4b). */
  storeDollar(name: string): string | undefined;
  /** `$NAME` in a default: the definitions chain (§4.6). */
  definitionDollar(name: string): string | undefined;
  /** Read a `--<f>-file` source, at most `limit` bytes. */
  readFieldFile(path: string, limit: number): FieldFileRead;
}

/** One bound field. */
export interface BoundField {
  def: FieldDef;
  /** Undefined when the field has no value (optional, not given, no default). */
  value: FieldValue | undefined;
  /** The value came from the field's default (behaviour.md §4.7 step 5). */
  fromDefault: boolean;
}

/** The outcome of binding. */
export type BindOutcome =
  | { kind: 'help' }
  | { kind: 'error'; code: CommandCode; message: string; details?: string[]; recovery?: string }
  | { kind: 'missing'; missing: FieldDef[] }
  | { kind: 'ok'; fields: Map<string, BoundField>; warnings: string[] };

interface Given {
  source: 'flag' | 'file' | 'positional';
  text: string;
}

const SHORTCUT_VALUE = /^@[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

class BindError extends Error {
  constructor(readonly outcome: Extract<BindOutcome, { kind: 'error' }>) { super(outcome.message); }
}

function invalid(a: ActionDef, message: string, extra: { details?: string[]; recovery?: string; code?: CommandCode } = {}): never {
  throw new BindError({ kind: 'error', code: extra.code ?? 'INVALID_ARGS', message, ...(extra.details ? { details: extra.details } : {}), recovery: extra.recovery ?? `/act.${a.id} --help` });
}

/** behaviour.md §5.3 step 1: an unquoted `--help` before `--` (or `-h` unless a field declares alias h). */
function wantsHelp(a: ActionDef, tokens: ArgToken[]): boolean {
  const hIsAlias = a.fields.some((f) => f.alias === 'h');
  for (const t of tokens) {
    if (isEndOfOptions(t)) return false;
    const f = asFlag(t);
    if (f && f.kind === 'long' && f.name === 'help' && f.value === undefined) return true;
    if (f && f.kind === 'short' && f.name === 'h' && !hIsAlias) return true;
  }
  return false;
}

/** `Flags: --a, -x, --b` detail of the unknown-flag error. */
function flagList(a: ActionDef): string {
  if (a.fields.length === 0) return 'Flags: (none)';
  return `Flags: ${a.fields.map((f) => (f.alias ? `--${f.name}, -${f.alias}` : `--${f.name}`)).join(', ')}`;
}

/** Walk the tokens (§5.3 step 2): flags and file sources into `given`, the rest into `positional`. */
function walk(a: ActionDef, tokens: ArgToken[]): { given: Map<string, Given>; positional: string[] } {
  const given = new Map<string, Given>();
  const positional: string[] = [];
  const set = (field: FieldDef, g: Given) => {
    const prev = given.get(field.name);
    if (prev) {
      const mixed = (prev.source === 'file') !== (g.source === 'file');
      invalid(a, mixed ? `Give either --${field.name} or --${field.name}-file, not both` : `--${field.name} given more than once`);
    }
    given.set(field.name, g);
  };
  let ended = false;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (ended) { positional.push(t.text); continue; }
    if (isEndOfOptions(t)) { ended = true; continue; }
    const flag = asFlag(t);
    if (!flag) { positional.push(t.text); continue; }
    const next = tokens[i + 1];
    const nextIsValue = next !== undefined && !asFlag(next) && !isEndOfOptions(next);
    const field = flag.kind === 'long' ? a.fields.find((f) => f.name === flag.name) : a.fields.find((f) => f.alias === flag.name);
    if (field) {
      if (flag.value !== undefined) { set(field, { source: 'flag', text: flag.value }); continue; }
      if (field.type === 'boolean') {
        if (next !== undefined && nextIsValue && isBooleanLiteral(next.text)) { set(field, { source: 'flag', text: next.text }); i++; }
        else set(field, { source: 'flag', text: 'true' });
        continue;
      }
      if (!nextIsValue) invalid(a, `--${field.name} needs a value (${field.type})`);
      set(field, { source: 'flag', text: next.text });
      i++;
      continue;
    }
    const base = flag.kind === 'long' && flag.name.endsWith('-file') ? a.fields.find((f) => f.name === flag.name.slice(0, -5)) : undefined;
    if (base) {
      if (flag.value !== undefined) { set(base, { source: 'file', text: flag.value }); continue; }
      if (!nextIsValue) invalid(a, `--${base.name}-file needs a value (path)`);
      set(base, { source: 'file', text: next.text });
      i++;
      continue;
    }
    invalid(a, `Unknown flag ${flag.raw} for /act.${a.id}`, { details: [flagList(a)] });
  }
  return { given, positional };
}

/** A value written so that the tokenizer of §5.2 reads it back as one plain value (never a flag). */
export function argWord(text: string): string {
  if (text !== '' && !/[\s"'\\]/.test(text) && !text.startsWith('-')) return text;
  return `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/**
 * The Recovery of "Too many positional values": optional fields are never bound
 * positionally (spec), so name the exact call that works — the same values, each extra one given to
 * the first unset optional field (declaration order) whose type and constraints accept it
 * (`/act.now --city "New York"`). Null when some extra value fits no optional field.
 */
function flagFormRecovery(a: ActionDef, b: { given: Map<string, Given>; positional: string[]; open: FieldDef[]; home: string }): string | null {
  const free = a.fields.filter((f) => !f.required && f.type !== 'boolean' && !b.given.has(f.name));
  const words = [`/act.${a.id}`, ...b.positional.slice(0, b.open.length).map(argWord)];
  for (const f of a.fields) {
    const g = b.given.get(f.name);
    if (g?.source === 'file') words.push(`--${f.name}-file`, argWord(g.text));
    else if (g) words.push(...(f.type === 'boolean' && g.text === 'true' ? [`--${f.name}`] : [`--${f.name}`, argWord(g.text)]));
  }
  const extra = b.positional.slice(b.open.length);
  const fits = (f: FieldDef, text: string) => normalise(f, text, b.home).ok;
  for (const text of extra) {
    const k = free.findIndex((f) => fits(f, text));
    if (k < 0) return null;
    words.push(`--${free[k].name}`, argWord(text));
    free.splice(k, 1);
  }
  // The guess may be wrong when another optional field would take the value too: name those.
  const others = free.filter((f) => extra.some((text) => fits(f, text))).map((f) => `--${f.name}`);
  return others.length > 0 ? `${words.join(' ')} (other optional fields that fit: ${others.join(', ')})` : words.join(' ');
}

/** §5.3 step 3: positional values bind to the unset required fields in declaration order. */
function bindPositionals(a: ActionDef, given: Map<string, Given>, positional: string[], home: string): void {
  const open = a.fields.filter((f) => f.required && !given.has(f.name));
  if (positional.length > open.length) {
    const names = open.length > 0 ? open.map((f) => f.name).join(', ') : 'none';
    invalid(a, `Too many positional values for /act.${a.id}: ${positional.length} given, ${open.length} expected (${names})`, {
      recovery: flagFormRecovery(a, { given, positional, open, home }) ?? 'pass optional fields as flags (--name value); put -- before values that start with -',
    });
  }
  positional.forEach((text, k) => given.set(open[k].name, { source: 'positional', text }));
}

/** §5.4: a file value, verbatim. */
function fileValue(a: ActionDef, f: FieldDef, path: string, ctx: BindContext): string {
  const r = ctx.readFieldFile(path, FIELD_FILE_BYTES);
  if (!r.ok) {
    if (r.kind === 'forbidden') throw new BindError({ kind: 'error', code: 'FORBIDDEN', message: `Path outside the workspace: ${r.display}` });
    if (r.kind === 'tooLarge') invalid(a, `--${f.name}-file ${r.display} is too large: ${r.size} bytes (limit ${FIELD_FILE_BYTES})`);
    invalid(a, `Cannot read --${f.name}-file ${r.display}: ${r.reason}`);
  }
  const text = r.data.toString('utf8');
  if (/[$`]/.test(text)) invalid(a, `--${f.name}-file ${r.display} contains $ or a backtick; file values may not contain them`);
  return text;
}

/** §5.3 step 4: shortcut, then `{var}` / `$NAME` (env store) substitution, once. */
function processValue(a: ActionDef, f: FieldDef, text: string, ctx: BindContext): FieldValue {
  if (SHORTCUT_VALUE.test(text)) {
    const name = text.slice(1);
    const v = ctx.shortcut(name);
    if (v === undefined) {
      const known = ctx.knownShortcuts();
      const detail = known.length > 0 ? `Known: ${known.slice(0, 12).map((k) => `@${k}`).join(', ')}` : 'No shortcuts in this topic yet.';
      invalid(a, `Unknown shortcut: ${text}`, { code: 'NOT_FOUND', details: [detail] });
    }
    return fromShortcut(f, v);
  }
  const literal = text.startsWith('@@') ? text.slice(1) : text;
  return substituteVars(literal, ctx.vars, (n) => ctx.storeDollar(n));
}

/**
 * Bind an action's argument text (behaviour.md §5.3). Returns help, an error, the missing required
 * fields, or the bound fields with any warnings (unset `$NAME`s in defaults).
 */
export function bindArguments(a: ActionDef, args: string, ctx: BindContext): BindOutcome {
  const tok = tokenize(args);
  try {
    if (!tok.ok) invalid(a, tok.message);
    if (wantsHelp(a, tok.tokens)) return { kind: 'help' };
    const { given, positional } = walk(a, tok.tokens);
    bindPositionals(a, given, positional, ctx.home);
    const raw = new Map<string, FieldValue>();
    for (const f of a.fields) {
      const g = given.get(f.name);
      if (g) raw.set(f.name, g.source === 'file' ? fileValue(a, f, g.text, ctx) : processValue(a, f, g.text, ctx));
    }
    const fields = new Map<string, BoundField>();
    const warnings: string[] = [];
    for (const f of a.fields) {
      const v = raw.get(f.name);
      if (v !== undefined) {
        const n = normalise(f, v, ctx.home);
        if (!n.ok) invalid(a, n.message);
        fields.set(f.name, { def: f, value: n.value, fromDefault: false });
      } else if (f.default !== undefined) {
        const dollar = (name: string) => ctx.definitionDollar(name);
        for (const name of unresolvedDollars(f.default, dollar)) {
          if (/^[A-Z][A-Z0-9_]*$/.test(name)) warnings.push(`warning: $${name} is not set (sent literally); set it with /set $${name} = "..."`);
        }
        fields.set(f.name, { def: f, value: normaliseDefault(f, substituteVars(f.default, ctx.vars, dollar), ctx.home), fromDefault: true });
      } else {
        fields.set(f.name, { def: f, value: undefined, fromDefault: false });
      }
    }
    const missing = a.fields.filter((f) => f.required && fields.get(f.name)?.value === undefined);
    if (missing.length > 0) return { kind: 'missing', missing };
    return { kind: 'ok', fields, warnings: [...new Set(warnings)] };
  } catch (err) {
    if (err instanceof BindError) return err.outcome;
    throw err;
  }
}

/** `--a <type>, --b <type>` of a Missing-required message (behaviour.md §5.3 step 7, §4.13). */
export function missingList(missing: FieldDef[]): string {
  return missing.map((f) => `--${f.name} <${f.type}>`).join(', ');
}
