import type { ShortcutValue } from '../domain/session.js';

/** Pad columns of rows to the longest value of each column (behaviour.md §2.11 "padded to the longest value"). */
export function columns(rows: string[][], indent = '  '): string[] {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => { widths[i] = Math.max(widths[i] ?? 0, [...c].length); });
  return rows.map((r) => indent + r.map((c, i) => (i === r.length - 1 ? c : c + ' '.repeat(widths[i] - [...c].length))).join('  ').trimEnd());
}

/** A shortcut value as printed by /info (behaviour.md §2.3: tuples as `(a, b)`). */
export function shortcutText(v: ShortcutValue): string {
  return Array.isArray(v) ? `(${v.join(', ')})` : v;
}

/** Display of a path inside or outside the home (behaviour.md §1.4). */
export function displayPath(abs: string, home: string): string {
  if (abs === home) return '~';
  if (abs.startsWith(home.endsWith('/') ? home : home + '/')) return '~/' + abs.slice(home.replace(/\/$/, '').length + 1);
  return abs;
}
