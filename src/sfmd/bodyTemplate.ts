import { slotText, valueText } from './fieldValues.js';
import { dollarAt, doubleBraceAt, placeholderAt, type DefinitionNames, type DollarWarnings, type Placeholder } from './substitute.js';

/**
 * Body templates (spec §4.11; behaviour.md §4.5): JSON-aware substitution with the modifiers
 * `base64`, `base64file` and `file`, applied left to right.
 */

/** Reads a file named by a modifier; the caller applies `~`, the home and the workspace policy. */
export type ModifierFileReader = (path: string) => { ok: true; data: Buffer } | { ok: false; forbidden: boolean; display: string; reason: string };

/** A failure that stops the action before any request (behaviour.md §4.5). */
export interface BodyFailure {
  code: 'INVALID_ARGS' | 'FORBIDDEN';
  message: string;
}

/** behaviour.md §4.5 modifiers. */
export const BODY_MODIFIERS = ['base64', 'base64file', 'file'] as const;

class Stop extends Error {
  constructor(readonly failure: BodyFailure) { super(failure.message); }
}

/** Apply modifiers left to right to a text value. */
function applyModifiers(value: string, ph: Placeholder, readFile: ModifierFileReader): string {
  let v = value;
  for (const m of ph.mods) {
    if (m === 'base64') { v = Buffer.from(v, 'utf8').toString('base64'); continue; }
    const r = readFile(v);
    if (!r.ok) {
      throw new Stop(r.forbidden
        ? { code: 'FORBIDDEN', message: `Path outside the workspace: ${r.display}` }
        : { code: 'INVALID_ARGS', message: `Cannot read ${r.display} for {${ph.expr}}: ${r.reason}` });
    }
    v = m === 'base64file' ? r.data.toString('base64') : r.data.toString('utf8');
  }
  return v;
}

/** Insert a value: JSON-escaped inside a string literal, raw outside (numbers in JSON normal form). */
function insert(value: string, inString: boolean, isNumber: boolean): string {
  if (inString) return JSON.stringify(value).slice(1, -1);
  if (isNumber && value !== '' && Number.isFinite(Number(value))) return JSON.stringify(Number(value));
  return value;
}

/**
 * Substitute a body template. Fields win over session variables (definitions, §4.6); `$NAME`s are
 * resolved through `names.dollar` and JSON-escaped inside string literals. Unknown modifiers leave
 * the placeholder as written (the parser already warned).
 */
export function substituteBody(template: string, names: DefinitionNames, warnings: DollarWarnings, readFile: ModifierFileReader): { ok: true; body: string } | { ok: false; failure: BodyFailure } {
  let out = '';
  let inString = false;
  let i = 0;
  try {
    while (i < template.length) {
      const c = template[i];
      if (c === '{') {
        const dbl = doubleBraceAt(template, i);
        if (dbl > 0) { out += template.slice(i, i + dbl); i += dbl; continue; }
        const ph = placeholderAt(template, i);
        if (ph && ph.mods.every((m) => (BODY_MODIFIERS as readonly string[]).includes(m))) {
          const rep = replacement(ph, names, readFile, inString);
          if (rep !== null) { out += rep; i += ph.length; continue; }
        }
      } else if (c === '$') {
        const d = dollarAt(template, i);
        if (d) {
          const v = names.dollar(d.name);
          if (v === undefined) warnings.add(d.name);
          out += v === undefined ? template.slice(i, i + d.length) : insert(v, inString, false);
          i += d.length;
          continue;
        }
      } else if (c === '\\' && inString) {
        out += template.slice(i, i + 2);
        i += 2;
        continue;
      } else if (c === '"') {
        inString = !inString;
      }
      out += c;
      i++;
    }
  } catch (err) {
    if (err instanceof Stop) return { ok: false, failure: err.failure };
    throw err;
  }
  return { ok: true, body: out };
}

function replacement(ph: Placeholder, names: DefinitionNames, readFile: ModifierFileReader, inString: boolean): string | null {
  const f = names.fields.get(ph.name);
  let text: string;
  let isNumber = false;
  if (f) {
    text = ph.index !== undefined ? slotText(f.value, ph.index) : valueText(f.value);
    isNumber = f.type === 'number' && ph.mods.length === 0;
  } else {
    const v = names.vars.get(ph.name);
    if (v === undefined) return null;
    text = ph.index !== undefined ? slotText(v, ph.index) : v;
  }
  return insert(applyModifiers(text, ph, readFile), inString, isNumber);
}
