import type { ShortcutValue } from '../domain/session.js';

export { columns } from '../domain/text.js';

/** A shortcut value as printed by /info (behaviour.md §2.3: tuples as `(a, b)`). */
export function shortcutText(v: ShortcutValue): string {
  return typeof v === 'string' ? v : `(${v.join(', ')})`;
}

export { displayPath } from '../domain/displayPath.js';
