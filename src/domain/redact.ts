import { cmdDisplay } from './output.js';

/**
 * What a command may show outside its own answer (the state inspector, behaviour.md §13.4): the
 * first line, cut to 200 characters (§1.5), with a `/set` value masked as `/set` listings mask
 * persistent values (§6.4: the first 2 characters then `…`, under 6 characters only `…`). The
 * body (lines after the first) never appears.
 */
export function redactCommand(cmd: string): string {
  const line = cmdDisplay(cmd);
  if (!/^\/set(\s|$)/i.test(line)) return line;
  const m = /^(\/set\s+(?:\$[A-Za-z_][A-Za-z0-9_]*|\{[^}]*\})\s*=\s*)(.*)$/i.exec(line);
  // Not a plain assignment (a fenced value, a typo): nothing after the word is shown.
  if (!m) return line.length > 4 ? '/set …' : line;
  return `${m[1]}${maskValue(m[2])}`;
}

/** A value's mask: quotes removed, the first 2 characters (6 or more) then `…`. */
function maskValue(raw: string): string {
  let v = raw.trim();
  const q = v[0];
  if (q === '"' || q === "'") v = v.length >= 2 && v.endsWith(q) ? v.slice(1, -1) : v.slice(1);
  const chars = [...v];
  return `"${chars.length < 6 ? '' : chars.slice(0, 2).join('')}…"`;
}
