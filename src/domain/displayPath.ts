/** Display of a path inside or outside the home (behaviour.md §1.4). */
export function displayPath(abs: string, home: string): string {
  if (abs === home) return '~';
  if (abs.startsWith(home.endsWith('/') ? home : home + '/')) return '~/' + abs.slice(home.replace(/\/$/, '').length + 1);
  return abs;
}
