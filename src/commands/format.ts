import type { ShortcutValue } from '../domain/session.js';

export { columns } from '../domain/text.js';

/** A shortcut value as printed by /info (behaviour.md §2.3: tuples as `(a, b)`). */
export function shortcutText(v: ShortcutValue): string {
  return Array.isArray(v) ? `(${v.join(', ')})` : v;
}

export { displayPath } from '../domain/displayPath.js';
