import type { GlobalOpts } from './common.js';

/** What the options before the first positional word say. */
export interface Leading {
  opts: GlobalOpts;
  /** Index of the first positional word (the topic or a subcommand), or argv.length. */
  at: number;
  version: boolean;
  help: boolean;
}

/**
 * Read the global options that come before the topic or subcommand (`--port n`, `--port=n`,
 * `--agent id`, `--wire user`, `--json`, `-V`, `-h`). Stops at the first word that is not one of them.
 */
export function leading(argv: string[]): Leading {
  const out: Leading = { opts: {}, at: argv.length, version: false, help: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const eq = a.indexOf('=');
    const name = a.startsWith('--') && eq > 0 ? a.slice(0, eq) : a;
    if (name === '--port' || name === '--agent' || name === '--wire') {
      const v = eq > 0 ? a.slice(eq + 1) : argv[++i];
      if (name === '--port') out.opts.port = v;
      else if (name === '--wire') out.opts.wire = v;
      else out.opts.agent = v;
    } else if (a === '--json') out.opts.json = true;
    else if (a === '-V' || a === '--version') out.version = true;
    else if (a === '-h' || a === '--help') out.help = true;
    else {
      out.at = a.startsWith('-') ? argv.length : i;
      if (a.startsWith('-')) break;
      return out;
    }
  }
  return out;
}

/**
 * Subcommands whose first argument may be an absolute path: `loom install /srv/apps/weather` (or an
 * unquoted `~/apps/weather`, which the shell expands to one) installs it; it is not a command for a
 * topic named `install`. Likewise `loom replay /tmp/t.jsonl` replays that file (behaviour.md §14.3), and
 * `loom inspect /tmp/night.json` serves that recorded bundle (behaviour.md §13.8).
 */
export const PATH_FIRST = new Set(['install', 'replay', 'inspect']);

/**
 * True when the word at `at` is a topic followed by a slash command or `-` (stdin): the one-command
 * form, whatever the word (`loom event /events` is topic `event`), except the PATH_FIRST subcommands.
 */
export function isExecForm(argv: string[], at: number): boolean {
  const next = argv[at + 1];
  return next !== undefined && (next.startsWith('/') || next === '-') && !PATH_FIRST.has(argv[at]);
}
