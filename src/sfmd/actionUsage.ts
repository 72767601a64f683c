import type { ActionDef, FieldDef } from './types.js';

/**
 * The call interface of an action (behaviour.md §5.5) as the actions side needs it: the usage line
 * of `Missing required` errors and the `--help` answer of a call. The documents side (issue 5)
 * owns the `/act` listing; the two should share one formatter when both land (note for the lead).
 */

/** `Usage: /act.<id> <req> … [--opt <type>] [--flag]` (behaviour.md §5.5). */
export function usageLine(a: ActionDef): string {
  const req = a.fields.filter((f) => f.required).map((f) => `<${f.name}>`);
  const opt = a.fields.filter((f) => !f.required).map((f) => (f.type === 'boolean' ? `[--${f.name}]` : `[--${f.name} <${f.type}>]`));
  return ['Usage:', `/act.${a.id}`, ...req, ...opt].join(' ');
}

/** The description column of a field line: description, enumeration, hints, min/max, default. */
function fieldNotes(f: FieldDef): string {
  const parts: string[] = [];
  if (f.description) parts.push(f.description);
  if (f.allowed && f.allowed.length > 0) parts.push(`one of ${f.allowed.join('|')}`);
  parts.push(...f.hints);
  const range = [f.min !== undefined ? `min:${f.min}` : '', f.max !== undefined ? `max:${f.max}` : ''].filter(Boolean).join(' ');
  if (range) parts.push(range);
  if (f.default !== undefined) parts.push(`default "${f.default}"`);
  if (f.type === 'boolean' && parts.length === 0) parts.push('boolean flag');
  return parts.join('; ');
}

/** The `/act.<id> --help` body lines after the system line (behaviour.md §5.5). */
export function helpLines(a: ActionDef): string[] {
  const rows = a.fields.map((f) => {
    const name = `--${f.name}${f.alias ? `, -${f.alias}` : ''}${f.type === 'boolean' ? '' : ` <${f.type}>`}`;
    return [name, f.required ? 'required' : 'optional', fieldNotes(f)];
  });
  const w0 = Math.max(0, ...rows.map((r) => [...r[0]].length));
  const w1 = Math.max(0, ...rows.map((r) => r[1].length));
  const lines = [usageLine(a)];
  for (const r of rows) lines.push(`  ${r[0].padEnd(w0)}   ${r[1].padEnd(w1)}  ${r[2]}`.trimEnd());
  const positional = a.fields.filter((f) => f.required).map((f) => f.name);
  if (positional.length > 0) lines.push(`Positional order: ${positional.join(', ')}`);
  if (a.fields.length > 0) lines.push('Any field also accepts --<field>-file <path>.');
  return lines;
}
