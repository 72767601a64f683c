import { CommandLexer, type Lookup } from './shellLexer.js';
import { Refused, type ShellValue } from './shellEval.js';

/**
 * The CLI quoting and evaluation rules of behaviour.md §4.8: each `{field}`/`{var}` placeholder
 * becomes text that makes bash see exactly the value, whatever quoting the template put around it
 * (shellQuoting.ts), and a value bash would evaluate a second time, as arithmetic or as a variable
 * name, must be a number or a name (shellEval.ts). The lexer (shellLexer.ts) knows the context of
 * every placeholder.
 */

export { quoteAnsi, quoteDouble, quoteFor, quoteSingle, quoteUnquoted } from './shellQuoting.js';
export type { ShellValue } from './shellEval.js';

/** The outcome of substituting a command template. */
export type ShellResult = { ok: true; command: string } | { ok: false; message: string };

/**
 * Substitute the placeholders of a CLI command template. `lookup` returns the value of a known
 * name (fields first, then session variables) or null for unknown names, which stay untouched,
 * as do `{{…}}`, `%{…}`, `${…}` and `$(…)` text. `exported` returns the session variable the
 * command receives as `$name` (checked when the command evaluates that name).
 */
export function substituteCommand(cmd: string, lookup: Lookup, exported: (name: string) => ShellValue | null = () => null): ShellResult {
  try {
    return { ok: true, command: new CommandLexer(cmd, lookup).run(exported) };
  } catch (err) {
    if (err instanceof Refused) return { ok: false, message: err.message };
    throw err;
  }
}

/** Names referenced as `$name` / `${name}` anywhere in a command (for exporting session variables, §4.8). */
export function referencedNames(cmd: string): Set<string> {
  const names = new Set<string>();
  for (const m of cmd.matchAll(/\$(?:\{([A-Za-z_][A-Za-z0-9_]*)[}:#%/^,@-]|([A-Za-z_][A-Za-z0-9_]*))/g)) names.add(m[1] ?? m[2]);
  return names;
}
