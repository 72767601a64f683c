import type { ShortcutValue } from '../domain/session.js';

export { columns } from '../domain/text.js';

/** A shortcut value as printed by /info (behaviour.md §2.3: tuples as `(a, b)`). */
export function shortcutText(v: ShortcutValue): string {
  return typeof v === 'string' ? v : `(${v.join(', ')})`;
}

/** Display of a path inside or outside the home (behaviour.md §1.4). */
export function displayPath(abs: string, home: string): string {
  if (abs === home) return '~';
  if (abs.startsWith(home.endsWith('/') ? home : home + '/')) return '~/' + abs.slice(home.replace(/\/$/, '').length + 1);
  return abs;
}
