/** No key skipped: one function, not a new default per call (this runs for every key of every recorded step). */
const never = (): boolean => false;

/**
 * Whether two values make the same JSON text, judged without making it: plain objects with the same
 * keys in the same order and the same values, arrays alike, primitives equal. Anything else (a Date,
 * a class instance: JSON.stringify may call its toJSON) is never the same. `skip(key, depth)` names
 * keys whose values are not compared (their keys still are).
 */
export function sameJson(a: unknown, b: unknown, skip: (key: string, depth: number) => boolean = never, depth = 0): boolean {
  if (a === b) return typeof a !== 'object' || a === null || plain(a);
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (!plain(a) || !plain(b) || Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i];
    if (k !== kb[i]) return false;
    if (skip(k, depth)) continue;
    if (!sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], skip, depth + 1)) return false;
  }
  return true;
}

/** A plain object or array: what JSON.stringify writes from its own keys alone. */
function plain(o: object): boolean {
  const proto = Object.getPrototypeOf(o) as unknown;
  return proto === Object.prototype || proto === Array.prototype || proto === null;
}
