/**
 * Lookups by user text. A plain object answers `constructor`, `toString` or `__proto__` with
 * members of Object.prototype, so a name typed by a user (an app, a variable, a help topic) must
 * only ever find own properties. Tables built from user text are Maps; these
 * helpers are for the fixed tables and foreign objects (process.env, parsed JSON) that stay objects.
 */

/** The own property `key` of `obj`, never an inherited member. */
export function ownValue<T>(obj: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

/** An object without a prototype, for maps from user text that must stay JSON-serialisable. */
export function nullRecord<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}
