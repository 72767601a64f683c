/**
 * The quoting table of behaviour.md §4.8: the text that makes bash see exactly a value in each
 * quoting context, plus one escaping level per enclosing backtick.
 */

const SAFE_BARE = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** behaviour.md §4.8 unquoted context: bare when safe, else single-quoted; empty → `''`. */
export function quoteUnquoted(v: string): string {
  if (v === '') return "''";
  if (SAFE_BARE.test(v)) return v;
  return `'${v.replace(/'/g, `'\\''`)}'`;
}

/** Inside `"…"`: `\`, `"`, `$` and backtick each prefixed by `\`. */
export function quoteDouble(v: string): string {
  return v.replace(/[\\"$`]/g, (c) => `\\${c}`);
}

/** Inside `'…'`: each `'` → `'\''`. */
export function quoteSingle(v: string): string {
  return v.replace(/'/g, `'\\''`);
}

/** Inside `$'…'`: `\` → `\\`, `'` → `\'`. */
export function quoteAnsi(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/'/g, "\\'");
}

/** One backtick level: the outer shell removes a backslash before `\`, `` ` `` and `$`. */
function escapeBacktickLayer(v: string): string {
  return v.replace(/[\\`$]/g, (c) => `\\${c}`);
}

/**
 * Quote a value for the context it lands in (`dq`, `sq`, `ansi`, `word`: an unquoted place where a
 * bare value could change the parse, anything else unquoted), plus one level per enclosing backtick.
 */
export function quoteFor(ctx: string, v: string, backtickLevels: number): string {
  let r = ctx === 'dq' ? quoteDouble(v) : ctx === 'sq' ? quoteSingle(v) : ctx === 'ansi' ? quoteAnsi(v) : ctx === 'word' ? `'${quoteSingle(v)}'` : quoteUnquoted(v);
  for (let k = backtickLevels; k > 0; k--) r = escapeBacktickLayer(r);
  return r;
}
