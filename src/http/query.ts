import { LoomError } from '../domain/errors.js';

/** A boolean query flag: `1`/`true` on, absent/`0`/`false` off; anything else is a 400 that names it. */
export function queryFlag(value: unknown, name: string): boolean {
  if (value === undefined || value === '0' || value === 'false') return false;
  if (value === '1' || value === 'true') return true;
  throw new LoomError(400, `Invalid ${name}`, { message: `use ${name}=1 or ${name}=0` });
}
