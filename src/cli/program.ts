import { Command } from 'commander';
import { agentCommands } from './agent.js';
import { backgroundCli } from './background.js';
import { capabilityCli } from './capability.js';
import { completionCli } from './completion.js';
import type { CliModule } from './common.js';
import { daemonCli } from './daemon.js';
import { eventCommands } from './event.js';
import { inspectCli } from './inspect.js';
import { installCli } from './install.js';
import { logsCli } from './logs.js';
import { mcpCli } from './mcp.js';
import { replayCli } from './replay.js';
import { serviceCli } from './service.js';
import { traceCli } from './trace.js';
import { versionCli } from './version.js';

/**
 * The CLI's command families after `agent` (which `agent capability` extends), in help order. A new
 * family (e.g. `loom install`, src/cli/install.ts) is a new file exporting a CliModule plus one line here.
 */
export const cliModules: CliModule[] = [
  daemonCli,
  backgroundCli,
  serviceCli,
  versionCli,
  logsCli,
  capabilityCli,
  eventCommands,
  installCli,
  mcpCli,
  traceCli,
  replayCli,
  inspectCli,
  completionCli,
];

/** The one-command form, exit codes and first examples (behaviour.md §2.13: listed in `loom --help`). */
const MAIN_HELP = `
Send one slash command to a topic:
  loom [options] <topic> <command…>   the words after the topic are joined with spaces
  loom [options] <topic> -            read the command (body included) from stdin
Options go before the topic; everything after it is the command. Each word stays one value (a word
with spaces or quotes is quoted again for Loom), except after /exec, whose words are shell text: quote
that text as a whole. Quote what your shell would change ($NAME, #, *, ;). An unquoted ~ reaches loom
expanded by the shell; loom turns it back into ~ (the agent home) unless the path is in the workspace.

Exit codes: 0 ok · 1 the command failed · 2 usage error · 3 daemon not reachable

Examples:
  loom start
  loom agent add leo && loom agent use leo
  loom main /help
  loom main /open ~/notes/plan.md
  loom main /act.add "Buy milk"
  loom main /exec 'ls -la | wc -l'
  loom main '/set $NOTE_TOKEN = "secret"'
  printf '/write ~/notes/todo.md\\n- buy milk\\n' | loom main -
  loom --json main /info
  loom logs -f`;

/** Build the `loom` command tree (behaviour.md §2.13). */
export function buildProgram(): Command {
  const json = process.argv.includes('--json');
  const program = new Command('loom')
    .usage('[options] <topic> <command…>  |  loom [options] <subcommand> …')
    .description("Loom — local daemon hosting AI agents' workspaces.")
    .option('--port <n>', 'daemon port (default: $SVC_PORT, else 3923; 3100 with --wire user)')
    .option('--agent <id>', 'agent, or user on the user wire (default: $LOOM_AGENT_ID, then `loom agent use`, then "default")')
    .option('--wire <wire>', 'agent, or user for a daemon of the earlier user-based wire (default: $SVC_WIRE, else read from the daemon)')
    .option('--json', 'print one JSON document; failures as {"error","code","message"} on stderr')
    .option('-V, --version', 'print the CLI version, and the daemon\'s when it runs')
    // Settings inherited by every subcommand created below: global options in each --help, exit
    // codes of our own, and commander's own errors in the CLI's voice (or as JSON).
    .configureHelp({ showGlobalOptions: true })
    .configureOutput({
      outputError: (text, write) => {
        const msg = text.replace(/^error: /, '').trim();
        write(json ? `${JSON.stringify({ error: msg, code: 'USAGE' }, null, 2)}\n` : `loom: ${msg}\n`);
      },
    })
    .exitOverride()
    .addHelpText('after', MAIN_HELP);
  const agent = agentCommands(program);
  for (const add of cliModules) add({ program, agent });
  return program;
}
