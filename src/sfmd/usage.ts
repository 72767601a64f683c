import type { ActionDef, FieldDef } from './types.js';

/**
 * The call interface of an action (behaviour.md §5.5; spec §4.10.5). Pure formatting: method, URL,
 * command, headers, body and response template never appear. Shared with the actions feature for
 * its `Missing required` usage lines.
 */

/** `--name, -a <type>` (booleans without `<type>`). */
function flagColumn(f: FieldDef): string {
  const names = f.alias ? `--${f.name}, -${f.alias}` : `--${f.name}`;
  return f.type === 'boolean' ? names : `${names} <${f.type}>`;
}

/** The description column: description, type note, enumeration, hints, bounds, default. */
function describe(f: FieldDef): string {
  const parts: string[] = [];
  if (f.description) parts.push(f.description);
  if (f.type === 'boolean') parts.push('boolean flag');
  if (f.type === 'tuple') parts.push('@name-N from a list, or "a,b"');
  if (f.allowed?.length) parts.push(`one of ${f.allowed.join('|')}`);
  parts.push(...f.hints);
  const bounds = [f.min !== undefined ? `min:${f.min}` : '', f.max !== undefined ? `max:${f.max}` : ''].filter((x) => x);
  if (bounds.length) parts.push(bounds.join(' '));
  if (f.default !== undefined) parts.push(`default "${f.default}"`);
  return parts.join('; ');
}

/** `Usage: /act.<id> <required…> [--optional <type>] [--flag]` (behaviour.md §5.5). */
export function usageLine(a: ActionDef): string {
  const req = a.fields.filter((f) => f.required).map((f) => `<${f.name}>`);
  const opt = a.fields.filter((f) => !f.required).map((f) => (f.type === 'boolean' ? `[--${f.name}]` : `[--${f.name} <${f.type}>]`));
  return ['Usage:', `/act.${a.id}`, ...req, ...opt].join(' ');
}

/** One line per field in declaration order, columns padded (behaviour.md §5.5). */
export function fieldLines(a: ActionDef): string[] {
  const width = Math.max(0, ...a.fields.map((f) => [...flagColumn(f)].length)) + 3;
  return a.fields.map((f) => {
    const col = flagColumn(f);
    return `  ${col}${' '.repeat(width - [...col].length)}${f.required ? 'required' : 'optional'}  ${describe(f)}`.trimEnd();
  });
}

/** The help body without its last line: usage, fields, positional order. */
export function helpCore(a: ActionDef): string[] {
  const lines = [usageLine(a)];
  if (a.fields.length === 0) lines.push('  (no fields)');
  lines.push(...fieldLines(a));
  const positional = a.fields.filter((f) => f.required).map((f) => f.name);
  if (positional.length) lines.push(`Positional order: ${positional.join(', ')}`);
  return lines;
}

/** The closing line of a help text when the action has fields. */
export const FIELD_FILE_LINE = 'Any field also accepts --<field>-file <path>.';

/** `/act.<id> --help` (behaviour.md §5.5): system line `Action: <id>` and the body lines. */
export function actionHelp(a: ActionDef): { system: string; lines: string[] } {
  const lines = helpCore(a);
  if (a.fields.length) lines.push(FIELD_FILE_LINE);
  return { system: `Action: ${a.id}`, lines };
}

/**
 * True when the argument text asks for help (behaviour.md §5.3 step 1): an unquoted `--help`
 * before an unquoted `--`, or `-h` unless a field declares alias `h`. Quotes follow §5.2; with an
 * unterminated quote the answer is false (the binder reports the quote).
 */
export function wantsHelp(args: string, a?: ActionDef): boolean {
  const hAlias = a?.fields.some((f) => f.alias === 'h') ?? false;
  for (const t of tokens(args)) {
    if (t.quoted) continue;
    if (t.text === '--') return false;
    if (t.text === '--help' || (t.text === '-h' && !hAlias)) return true;
  }
  return false;
}

/** Split argument text into tokens with a flag saying whether any part was quoted (behaviour.md §5.2). */
function* tokens(s: string): Generator<{ text: string; quoted: boolean }> {
  let i = 0;
  while (i < s.length) {
    while (i < s.length && /\s/.test(s[i])) i++;
    if (i >= s.length) return;
    let text = '';
    let quoted = false;
    while (i < s.length && !/\s/.test(s[i])) {
      const c = s[i];
      if (c === '"' || c === "'") {
        const end = c === "'" ? s.indexOf("'", i + 1) : closingDouble(s, i + 1);
        if (end < 0) return;
        text += s.slice(i + 1, end);
        quoted = true;
        i = end + 1;
      } else if (c === '\\' && i + 1 < s.length) {
        // An escaped character counts as quoted: `\--help` is a value, not a flag.
        text += s[i + 1];
        quoted = true;
        i += 2;
      } else {
        text += c;
        i++;
      }
    }
    yield { text, quoted };
  }
}

function closingDouble(s: string, from: number): number {
  for (let i = from; i < s.length; i++) {
    if (s[i] === '\\') i++;
    else if (s[i] === '"') return i;
  }
  return -1;
}
