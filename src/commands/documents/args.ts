import { tokenize } from '../../sfmd/tokenize.js';

/** A token of a file command's arguments and whether it was quoted (a quoted `--x` is a path, not a flag). */
export interface Arg {
  text: string;
  quoted: boolean;
}

/**
 * Split the argument text of a file command into words with the same tokenizer as action calls
 * (behaviour.md §5.2: whitespace separates, `"…"` with `\"` `\\`, `'…'`, backslash escapes outside
 * quotes). Returns null on an unterminated quote.
 */
export function splitArgs(text: string): Arg[] | null {
  const r = tokenize(text);
  return r.ok ? r.tokens.map((t) => ({ text: t.text, quoted: t.quotedFrom >= 0 })) : null;
}

/** Parsed flags and positionals: `--name value` / `--name=value` for `valued`, bare `--name` for `bare`. */
export interface Parsed {
  flags: Map<string, string | true>;
  positional: string[];
  unknown: string[];
}

/** Split words into the flags a command knows and its positional values. */
export function parseFlags(args: Arg[], valued: string[], bare: string[]): Parsed {
  const p: Parsed = { flags: new Map(), positional: [], unknown: [] };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const m = a.quoted ? null : /^--([a-z][a-z-]*)(?:=([\s\S]*))?$/.exec(a.text);
    if (!m) {
      p.positional.push(a.text);
      continue;
    }
    if (valued.includes(m[1])) {
      if (m[2] !== undefined) p.flags.set(m[1], m[2]);
      else if (i + 1 < args.length) p.flags.set(m[1], args[++i].text);
      else p.unknown.push(a.text);
    } else if (bare.includes(m[1]) && m[2] === undefined) p.flags.set(m[1], true);
    else p.unknown.push(a.text);
  }
  return p;
}
