import { CommanderError, type Command } from 'commander';
import { closestWord } from '../domain/suggest.js';
import { guard, UsageError } from './common.js';
import { printCompletions } from './completion.js';
import { execForm } from './exec.js';
import { buildProgram } from './program.js';
import { isExecForm, leading } from './argv.js';
import { printVersion } from './version.js';

/** Subcommand names of the program (with `help`). */
const subcommands = (program: Command): string[] => [...program.commands.map((c) => c.name()), 'help'];

/**
 * A topic word without a slash command after it: a usage error with an example (behaviour.md
 * §2.13), naming the subcommand when the word looks like a mistyped one (`loom stauts`).
 */
function missingCommand(program: Command, word: string, rest: string[]): never {
  const near = closestWord(word, subcommands(program));
  if (near) throw new UsageError(`loom: '${word}' is not a loom command; did you mean: loom ${near}?  (a slash command for topic '${word}': loom ${word} /help)`);
  if (rest.length === 0) throw new UsageError(`loom: no command for topic '${word}'; e.g.  loom ${word} /help   (loom --help lists the CLI commands)`);
  if (rest[0].startsWith('-')) throw new UsageError(`loom: options go before the topic, e.g.  loom ${rest[0]} ${word} /help`);
  throw new UsageError(`loom: a command starts with /, e.g.  loom ${word} /${rest[0]}`);
}

/** Run commander over argv; its usage errors exit 2, help and version exit 0. */
async function runProgram(program: Command, argv: string[]): Promise<void> {
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    process.exitCode = err.exitCode === 0 ? 0 : 2;
  }
}

/**
 * The whole CLI (behaviour.md §2.13): `loom [options] <topic> <command…>` when the first word is not a
 * subcommand (or is one, such as the hub topics `agent` and `event`, followed by a slash command
 * or `-`); otherwise the command tree. main.ts takes the one-command form and `--version` itself
 * and hands every other call here, where they are read again the same way.
 */
export async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  // The completion scripts' helper: every word after it is the typed line, options included.
  if (argv[0] === '__complete') return printCompletions(program, argv.slice(1));
  const lead = leading(argv);
  if (lead.version) return guard(lead.opts, () => printVersion(lead.opts));
  if (lead.at >= argv.length || lead.help) return runProgram(program, argv);
  const word = argv[lead.at];
  const rest = argv.slice(lead.at + 1);
  const next = rest[0];
  const slashOrStdin = isExecForm(argv, lead.at);
  if (subcommands(program).includes(word) && !slashOrStdin) return runProgram(program, argv);
  return guard(lead.opts, async () => {
    if (next === '--help' || next === '-h') {
      program.outputHelp();
      return 0;
    }
    if (!slashOrStdin) missingCommand(program, word, rest);
    return execForm(lead.opts, word, rest);
  });
}
