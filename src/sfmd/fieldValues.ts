import { isAbsolute, resolve } from 'node:path';
import type { ShortcutValue } from '../domain/session.js';
import type { FieldDef } from './types.js';

/**
 * Field value types, normal forms and constraint checks (behaviour.md §4.4, §5.6). Pure: the home
 * folder for `path` values is passed in.
 */

/** A bound field value: text, or a list of slots for tuples. */
export type FieldValue = string | string[];

/** behaviour.md §4.4 number syntax. */
export const NUMBER_RE = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const TRUE_WORDS = ['true', 'yes', 'on', '1'];
const FALSE_WORDS = ['false', 'no', 'off', '0'];

/** True when `v` is a boolean literal of behaviour.md §4.4 (case-insensitive). */
export function isBooleanLiteral(v: string): boolean {
  const l = v.toLowerCase();
  return TRUE_WORDS.includes(l) || FALSE_WORDS.includes(l);
}

/** Parse a tuple text: `(a, b)` or `a,b` (items trimmed, quotes around an item removed). */
export function parseTupleText(v: string): string[] | null {
  let inner = v.trim();
  if (inner.startsWith('(')) {
    if (!inner.endsWith(')')) return null;
    inner = inner.slice(1, -1);
  } else if (inner.endsWith(')')) return null;
  return splitTopLevel(inner).map(unquoteItem);
}

/** Split on commas that are not inside quotes, parentheses or braces. */
export function splitTopLevel(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let quote: string | null = null;
  let cur = '';
  for (const c of s) {
    if (quote) { if (c === quote) quote = null; cur += c; continue; }
    if (c === '"' || c === "'") { quote = c; cur += c; continue; }
    if (c === '(' || c === '{' || c === '[') depth++;
    if ((c === ')' || c === '}' || c === ']') && depth > 0) depth--;
    if (c === ',' && depth === 0) { out.push(cur); cur = ''; continue; }
    cur += c;
  }
  out.push(cur);
  return out;
}

/** Trim an item and remove one pair of surrounding quotes. */
export function unquoteItem(s: string): string {
  const t = s.trim();
  if (t.length >= 2 && ((t[0] === '"' && t.endsWith('"')) || (t[0] === "'" && t.endsWith("'")))) return t.slice(1, -1);
  return t;
}

/** The outcome of normalising one value. */
export type NormalResult = { ok: true; value: FieldValue } | { ok: false; message: string };

/**
 * Type check and normal form (behaviour.md §4.4) plus constraints (§5.6) of one explicitly given
 * value (a shortcut's tuple arrives as an array).
 */
export function normalise(field: FieldDef, raw: FieldValue, home: string): NormalResult {
  const f = `--${field.name}`;
  const texts = Array.isArray(raw) ? raw : [raw];
  if (texts.some((t) => t.includes('\0'))) return { ok: false, message: `Value for ${f} contains a NUL byte` };
  let value: FieldValue;
  switch (field.type) {
    case 'tuple': {
      if (Array.isArray(raw)) { value = raw; break; }
      const slots = raw.trim() === '' ? null : parseTupleText(raw);
      if (!slots) return { ok: false, message: `Invalid value for ${f}: expected a tuple (@name-N or "a,b")` };
      value = slots;
      break;
    }
    case 'number': {
      const v = joined(raw);
      if (!NUMBER_RE.test(v)) return { ok: false, message: `Invalid value for ${f}: "${v}" is not a number` };
      value = v;
      break;
    }
    case 'boolean': {
      const v = joined(raw);
      if (!isBooleanLiteral(v)) return { ok: false, message: `Invalid value for ${f}: "${v}" is not a boolean (use true or false)` };
      value = TRUE_WORDS.includes(v.toLowerCase()) ? 'true' : 'false';
      break;
    }
    case 'path':
      value = normalisePath(joined(raw), home);
      break;
    default:
      value = joined(raw);
  }
  const c = checkConstraints(field, value);
  return c ? { ok: false, message: c } : { ok: true, value };
}

/** A tuple given to a non-tuple field reads as its slots joined with `,` (the `{name}` rule). */
function joined(v: FieldValue): string {
  return Array.isArray(v) ? v.join(',') : v;
}

/** behaviour.md §4.4 path: `~`/`~/` is the home; a relative value becomes absolute against the home. */
export function normalisePath(v: string, home: string): string {
  if (v === '') return v;
  if (v === '~') return home;
  if (v.startsWith('~/')) return resolve(home, v.slice(2));
  return isAbsolute(v) ? v : resolve(home, v);
}

/** behaviour.md §5.6: enumeration, then min/max (value of numbers, length in characters otherwise). */
function checkConstraints(field: FieldDef, value: FieldValue): string | null {
  if (Array.isArray(value) || field.type === 'boolean') return null;
  const f = `--${field.name}`;
  if (field.allowed && field.allowed.length > 0 && !field.allowed.includes(value)) {
    return `Invalid value for ${f}: "${value}" (allowed: ${field.allowed.join('|')})`;
  }
  if (field.type === 'number') {
    const n = Number(value);
    if (field.min !== undefined && n < field.min) return `Invalid value for ${f}: ${value} is below min:${field.min}`;
    if (field.max !== undefined && n > field.max) return `Invalid value for ${f}: ${value} is above max:${field.max}`;
    return null;
  }
  const len = [...value].length;
  if (field.min !== undefined && len < field.min) return `Invalid value for ${f}: shorter than min:${field.min} characters`;
  if (field.max !== undefined && len > field.max) return `Invalid value for ${f}: longer than max:${field.max} characters`;
  return null;
}

/**
 * Normal form of a default (behaviour.md §4.4: defaults were validated, with a warning only, when
 * parsed): a default that fails its type check is kept as written rather than failing the call.
 */
export function normaliseDefault(field: FieldDef, text: string, home: string): FieldValue {
  if (field.type === 'tuple') return text.trim() === '' ? [] : parseTupleText(text) ?? [text];
  if (field.type === 'boolean' && isBooleanLiteral(text)) return TRUE_WORDS.includes(text.toLowerCase()) ? 'true' : 'false';
  if (field.type === 'path') return normalisePath(text, home);
  return text;
}

/** Convert a shortcut value to a field value (a scalar shortcut is a 1-slot tuple for tuple fields). */
export function fromShortcut(field: FieldDef, v: ShortcutValue): FieldValue {
  if (typeof v === 'string') return field.type === 'tuple' ? [v] : v;
  return [...v];
}

/** `{name}` text of a value: tuples join their slots with `,` (spec §4.11). */
export function valueText(v: FieldValue | undefined): string {
  if (v === undefined) return '';
  return Array.isArray(v) ? v.join(',') : v;
}

/** `{name[N]}` text: a tuple slot (out of range: empty); for scalars slot 0 is the value. */
export function slotText(v: FieldValue | undefined, index: number): string {
  if (v === undefined) return '';
  if (Array.isArray(v)) return v[index] ?? '';
  return index === 0 ? v : '';
}
