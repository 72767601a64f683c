import { parseArgs } from 'node:util';
import type { Leading } from './argv.js';

/*
 * A module of its own, imported by the entry only for a line whose subcommand is `daemon`: node:util
 * loads a dozen of Node's modules that the one-command form must not pay for.
 */

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
