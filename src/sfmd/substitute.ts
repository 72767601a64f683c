import { slotText, valueText, type FieldValue } from './fieldValues.js';
import type { FieldType } from './types.js';

/**
 * Placeholder substitution in action definitions (behaviour.md §4.5, §4.6): known names only,
 * single pass (inserted text is never rescanned), `{{name}}` never substituted.
 */

/** A declared field as substitution sees it: its type and bound value (undefined = no value). */
export interface FieldSlot {
  type: FieldType;
  value: FieldValue | undefined;
}

/** What definitions can refer to. */
export interface DefinitionNames {
  /** Every declared field (a field without a value substitutes as the empty string). */
  fields: Map<string, FieldSlot>;
  /** Session variables. */
  vars: ReadonlyMap<string, string>;
  /** `$NAME` resolution for definitions (extra env → store → env: default → process env), undefined when unset. */
  dollar(name: string): string | undefined;
}

/** A `{…}` placeholder (behaviour.md §4.5 syntax). */
export interface Placeholder {
  name: string;
  index?: number;
  mods: string[];
  /** The text between the braces, for messages (`{<expr>}`). */
  expr: string;
  /** Length of the whole placeholder in the source, braces included. */
  length: number;
}

const PLACEHOLDER_RE = /^\{([A-Za-z_][A-Za-z0-9_-]*)(?:\[(\d+)\])?((?:\|[A-Za-z0-9_]+)*)\}/;
const DOLLAR_RE = /^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/;
/** Names whose unresolved use in an HTTP definition is reported (behaviour.md §4.6). */
const REPORTED_DOLLAR = /^[A-Z][A-Z0-9_]*$/;

/** Parse a placeholder at `text[i]` (which is `{`), or null. */
export function placeholderAt(text: string, i: number): Placeholder | null {
  const m = PLACEHOLDER_RE.exec(text.slice(i, i + 200));
  if (!m) return null;
  return {
    name: m[1],
    ...(m[2] !== undefined ? { index: Number(m[2]) } : {}),
    mods: m[3] ? m[3].slice(1).split('|') : [],
    expr: m[0].slice(1, -1),
    length: m[0].length,
  };
}

/** Length of a `{{…}}` run at `text[i]` that must stay untouched, or 0. */
export function doubleBraceAt(text: string, i: number): number {
  if (text[i] !== '{' || text[i + 1] !== '{') return 0;
  const end = text.indexOf('}}', i + 2);
  if (end < 0) return 0;
  const inner = text.slice(i + 2, end);
  return /[{}]/.test(inner) ? 0 : end + 2 - i;
}

/** A `$NAME` / `${NAME}` reference at `text[i]`, or null. */
export function dollarAt(text: string, i: number): { name: string; length: number } | null {
  const m = DOLLAR_RE.exec(text.slice(i, i + 80));
  return m ? { name: m[1] ?? m[2], length: m[0].length } : null;
}

/** Collects `warning: $NAME is not set …` lines once per name (behaviour.md §4.6). */
export class DollarWarnings {
  private readonly names: string[] = [];
  /** Record an unresolved name (only `$[A-Z][A-Z0-9_]*` names are reported). */
  add(name: string): void {
    if (REPORTED_DOLLAR.test(name) && !this.names.includes(name)) this.names.push(name);
  }
  /** The unresolved names, in order of first appearance. */
  unresolved(): readonly string[] {
    return this.names;
  }
  /** The warning lines, in order of first appearance. */
  lines(): string[] {
    return this.names.map((n) => `warning: $${n} is not set (sent literally); set it with /set $${n} = "..."`);
  }
}

/** Text of a field or variable placeholder, honouring `[N]`. */
function placeholderText(value: FieldValue | undefined, ph: Placeholder): string {
  return ph.index !== undefined ? slotText(value, ph.index) : valueText(value);
}

/** Generic single-pass scan: `brace` and `dollar` return the replacement, or null to keep the text. */
function scan(text: string, brace: (ph: Placeholder) => string | null, dollar: ((name: string) => string | null) | null): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '{') {
      const dbl = doubleBraceAt(text, i);
      if (dbl > 0) { out += text.slice(i, i + dbl); i += dbl; continue; }
      const ph = placeholderAt(text, i);
      const rep = ph ? brace(ph) : null;
      if (ph && rep !== null) { out += rep; i += ph.length; continue; }
    } else if (c === '$' && dollar) {
      const d = dollarAt(text, i);
      const rep = d ? dollar(d.name) : null;
      if (d && rep !== null) { out += rep; i += d.length; continue; }
      if (d) { out += text.slice(i, i + d.length); i += d.length; continue; }
    }
    out += c;
    i++;
  }
  return out;
}

/** `$NAME` replacement in definitions: the resolved value, or the literal text with a warning. */
function dollarIn(names: DefinitionNames, warnings: DollarWarnings | null): (name: string) => string | null {
  return (name) => {
    const v = names.dollar(name);
    if (v === undefined) { warnings?.add(name); return null; }
    return v;
  };
}

/**
 * Substitute an action URL (behaviour.md §4.6): fields and session variables percent-encoded
 * (field wins), `$NAME` raw. Returns the URL and the fields it consumed.
 */
export function substituteUrl(url: string, names: DefinitionNames, warnings: DollarWarnings): { url: string; consumed: Set<string> } {
  const consumed = new Set<string>();
  const out = scan(url, (ph) => {
    if (ph.mods.length > 0) return null;
    const f = names.fields.get(ph.name);
    if (f) { consumed.add(ph.name); return encodeURIComponent(placeholderText(f.value, ph)); }
    const v = names.vars.get(ph.name);
    return v !== undefined ? encodeURIComponent(placeholderText(v, ph)) : null;
  }, dollarIn(names, warnings));
  return { url: out, consumed };
}

/** Substitute a header value (behaviour.md §4.6): fields, session variables and `$NAME`, raw. */
export function substituteHeader(value: string, names: DefinitionNames, warnings: DollarWarnings): string {
  return scan(value, (ph) => {
    if (ph.mods.length > 0) return null;
    const f = names.fields.get(ph.name);
    if (f) return placeholderText(f.value, ph);
    const v = names.vars.get(ph.name);
    return v !== undefined ? placeholderText(v, ph) : null;
  }, dollarIn(names, warnings));
}

/**
 * `{var}` and `$NAME` substitution of a field default or a caller's flag value (behaviour.md §4.6,
 * §5.3 step 4b): `dollar` decides which `$NAME` sources apply; unknown names stay as written.
 */
export function substituteVars(text: string, vars: ReadonlyMap<string, string>, dollar: (name: string) => string | undefined): string {
  return scan(text, (ph) => {
    if (ph.mods.length > 0) return null;
    const v = vars.get(ph.name);
    return v !== undefined ? placeholderText(v, ph) : null;
  }, (name) => dollar(name) ?? null);
}

/** Unresolved `$NAME`s of a text under a resolver (for warnings about defaults). */
export function unresolvedDollars(text: string, dollar: (name: string) => string | undefined): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== '$') continue;
    const d = dollarAt(text, i);
    if (d && dollar(d.name) === undefined) out.push(d.name);
  }
  return out;
}

/**
 * Substitute a `to:` path of a response template (behaviour.md §4.12): session variables, then
 * fields (template priority, §4.6), raw; no `$NAME`, no response references.
 */
export function substitutePathTemplate(text: string, fields: Map<string, FieldSlot>, vars: ReadonlyMap<string, string>): string {
  return scan(text, (ph) => {
    if (ph.mods.length > 0) return null;
    const v = vars.get(ph.name);
    if (v !== undefined) return placeholderText(v, ph);
    const f = fields.get(ph.name);
    return f ? placeholderText(f.value, ph) : null;
  }, null);
}
