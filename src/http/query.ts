import { LoomError } from '../domain/errors.js';

/** A boolean query flag: `1`/`true` on, absent/`0`/`false` off; anything else is a 400 that names it. */
export function queryFlag(value: unknown, name: string): boolean {
  if (value === undefined || value === '0' || value === 'false') return false;
  if (value === '1' || value === 'true') return true;
  throw new LoomError(400, `Invalid ${name}`, { message: `use ${name}=1 or ${name}=0` });
}

/**
 * A text query parameter: absent is `undefined`; given once, its text; given more than once
 * (`?x=a&x=b`, which the query parser turns into an array) a 400 that names it, rather than a filter
 * silently dropped. Express's simple parser reads `x[]` as a parameter of another name.
 */
export function queryText(value: unknown, name: string): string | undefined {
  if (value === undefined || typeof value === 'string') return value;
  throw new LoomError(400, `Invalid ${name}`, { message: `give ${name} once, as text` });
}
