import type { FieldDef, FieldType } from './types.js';
import { readQuoted, wsLength } from './quote.js';

/** behaviour.md §4.4 detection: an indented `name[, -a]: word` line. */
const PARAM_RE = /^[ \t]+([A-Za-z_][A-Za-z0-9_-]*)(?:\s*,\s*-([A-Za-z]))?\s*:\s+([A-Za-z][A-Za-z0-9_-]*)(?=\s|\(|$)/;
const TYPES: readonly FieldType[] = ['string', 'number', 'boolean', 'path', 'tuple'];
/** behaviour.md §4.4 number syntax. */
export const NUMBER_RE = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
/** behaviour.md §4.4 boolean literals. */
export const BOOLEAN_WORDS = ['true', 'false', 'yes', 'no', 'on', 'off', '1', '0'];

/** True when `line` is a parameter line (behaviour.md §4.4; `body:` only with a known type word). */
export function isParamLine(line: string): boolean {
  const m = PARAM_RE.exec(line);
  if (!m) return false;
  return m[1] !== 'body' || (TYPES as readonly string[]).includes(m[3].toLowerCase());
}

/** Result of one parameter line: the field and the warning texts (after `act.<id>: `). */
export interface ParsedParam {
  field: FieldDef;
  problems: string[];
}

/** True when a default is a valid value of `type` (placeholders are checked when used, not here). */
function defaultValid(type: FieldType, v: string): boolean {
  if (/\{[A-Za-z_][A-Za-z0-9_]*\}|\$\{?[A-Za-z_]/.test(v)) return true;
  if (type === 'number') return NUMBER_RE.test(v.trim());
  if (type === 'boolean') return BOOLEAN_WORDS.includes(v.trim().toLowerCase());
  return !v.includes('\u0000');
}

/** Apply the comma-separated constraints of behaviour.md §4.4 to `field`. */
function applyConstraints(field: FieldDef, text: string, problems: string[]): void {
  for (const raw of text.split(',')) {
    const c = raw.trim();
    if (c === '') continue;
    const lc = c.toLowerCase();
    const mm = /^(min|max)\s*:\s*(-?\d+(?:\.\d+)?)$/i.exec(c);
    if (lc === 'required') field.required = true;
    else if (lc === 'optional') field.required = false;
    else if (mm) field[mm[1].toLowerCase() as 'min' | 'max'] = Number(mm[2]);
    else if (c.includes('|')) field.allowed = c.split('|').map((x) => x.trim()).filter((x) => x !== '');
    else {
      field.hints.push(c);
      problems.push(`unknown constraint "${c}" for field ${field.name}; kept as a hint`);
    }
  }
}

/** Read a `( … )` group at the start of `text` (nested parentheses allowed); null if unclosed. */
function readGroup(text: string): { inner: string; length: number } | null {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')' && --depth === 0) return { inner: text.slice(1, i), length: i + 1 };
  }
  return null;
}

/** The default after `=`: `"…"` (escapes), `'…'`, or bare text to the end of the line, trimmed. */
function readDefault(text: string): string {
  const t = text.trim();
  const q = readQuoted(t);
  if (q && t.slice(q.length).trim() === '') return q.value;
  return t;
}

/**
 * Parse one parameter line (behaviour.md §4.4). `lineNo` is the 1-based line in the file.
 * Call only when `isParamLine(line)` holds.
 */
export function parseParam(line: string, lineNo: number): ParsedParam {
  const m = PARAM_RE.exec(line) as RegExpExecArray;
  const problems: string[] = [];
  const typeWord = m[3].toLowerCase();
  let type: FieldType = 'string';
  if ((TYPES as readonly string[]).includes(typeWord)) type = typeWord as FieldType;
  else problems.push(`unknown type "${m[3]}" for field ${m[1]}; treated as string`);
  const field: FieldDef = { name: m[1], type, required: false, hints: [], line: lineNo };
  if (m[2]) field.alias = m[2];
  let rest = line.slice(m[0].length);
  let constraints = false;
  let leftover = '';
  for (;;) {
    rest = rest.slice(wsLength(rest));
    if (rest === '') break;
    if (rest[0] === '(' && !constraints) {
      const g = readGroup(rest);
      if (g) {
        applyConstraints(field, g.inner, problems);
        constraints = true;
        rest = rest.slice(g.length);
        continue;
      }
    }
    if ((rest[0] === '"' || rest[0] === "'") && field.description === undefined) {
      const q = readQuoted(rest);
      if (q) {
        field.description = q.value;
        rest = rest.slice(q.length);
        continue;
      }
    }
    if (rest[0] === '=') {
      field.default = readDefault(rest.slice(1));
      break;
    }
    // Not part of the grammar: up to the next `=` (or the end) it is kept out and reported.
    const eq = rest.indexOf('=');
    leftover += (leftover ? ' ' : '') + (eq < 0 ? rest : rest.slice(0, eq)).trim();
    rest = eq < 0 ? '' : rest.slice(eq);
  }
  if (leftover) problems.push(`unrecognised text after field ${field.name} ignored: ${leftover}`);
  if (field.default !== undefined && !defaultValid(type, field.default)) {
    problems.push(`default "${field.default}" of field ${field.name} is not a valid ${type}`);
  }
  return { field, problems };
}
