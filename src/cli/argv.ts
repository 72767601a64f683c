import { parseArgs } from 'node:util';
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
 * topic named `install`. Likewise `loom replay /tmp/t.jsonl` replays that file (behaviour.md §14.3).
 */
export const PATH_FIRST = new Set(['install', 'replay']);

/**
 * True when the word at `at` is a topic followed by a slash command or `-` (stdin): the one-command
 * form, whatever the word (`loom event /events` is topic `event`), except the PATH_FIRST subcommands.
 */
export function isExecForm(argv: string[], at: number): boolean {
  const next = argv[at + 1];
  return next !== undefined && (next.startsWith('/') || next === '-') && !PATH_FIRST.has(argv[at]);
}

/**
 * The options `loom daemon` takes (cli/daemon.ts), as `util.parseArgs` reads them, with the global
 * ones commander also accepts after the subcommand.
 */
const DAEMON_OPTIONS = {
  port: { type: 'string' }, agent: { type: 'string' }, json: { type: 'boolean' }, wire: { type: 'string' },
  quiet: { type: 'boolean' }, record: { type: 'string' }, sandbox: { type: 'string' },
  'exit-with-stdin': { type: 'boolean' }, 'remove-data-dir': { type: 'boolean' },
} as const;

/** What `loom daemon` hands the daemon (the shape of main.ts's DaemonRunOptions). */
export interface DaemonArgs {
  port?: string;
  wire?: string;
  quiet: boolean;
  record?: string;
  sandbox?: string;
  exitWithStdin: boolean;
  removeDataDir: boolean;
}

/**
 * `loom [globals] daemon [options]` read without the command tree. It is the line of `npm start`,
 * `loom start`, the service unit and replay's private daemon, and a cold start would otherwise first
 * load commander and every command family to read it. Null for anything this table does not take
 * (`--help`, a misspelt option, a stray word, a value missing): the command tree then answers with
 * its own message, so both readers agree on every line this one accepts.
 */
export function daemonForm(argv: string[], lead: Leading): DaemonArgs | null {
  if (lead.help || lead.version || argv[lead.at] !== 'daemon') return null;
  let values;
  try {
    ({ values } = parseArgs({ args: argv.slice(lead.at + 1), options: DAEMON_OPTIONS, strict: true, allowPositionals: false }));
  } catch {
    return null;
  }
  return {
    port: values.port ?? lead.opts.port, wire: values.wire ?? lead.opts.wire, quiet: values.quiet === true, record: values.record, sandbox: values.sandbox,
    exitWithStdin: values['exit-with-stdin'] === true, removeDataDir: values['remove-data-dir'] === true,
  };
}
