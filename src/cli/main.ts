#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { VERSION } from '../version.js';
import { agentCommands } from './agent.js';
import { start, status, stop } from './background.js';
import { guard, type GlobalOpts } from './common.js';
import { execOnce } from './exec.js';
import { cliExtensions } from './extensions.js';

/** Global options that take a value, for spotting the `<topic> '<cmd>'` form before commander. */
const VALUE_OPTS = new Set(['--port', '--agent']);

/** The positional words of argv (options and their values skipped). */
function positionals(argv: string[]): { pos: string[]; opts: GlobalOpts } {
  const pos: string[] = [];
  const opts: GlobalOpts = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const eq = a.indexOf('=');
    const name = eq > 0 ? a.slice(0, eq) : a;
    if (VALUE_OPTS.has(name)) {
      const v = eq > 0 ? a.slice(eq + 1) : argv[++i];
      if (name === '--port') opts.port = v;
      else opts.agent = v;
    } else if (a === '--json') opts.json = true;
    else pos.push(a);
  }
  return { pos, opts };
}

/** Build the `loom` command tree (behaviour.md §2.13). */
export function buildProgram(): Command {
  const program = new Command('loom')
    .version(VERSION)
    .description("Loom — local daemon hosting AI agents' workspaces.\n\nOne command: loom [--agent id] <topic> '<cmd>'   e.g.  loom main '/help'")
    .option('--port <n>', 'daemon port (default: $SVC_PORT or 3923)')
    .option('--agent <id>', 'agent id (default: $LOOM_AGENT_ID, then `loom agent use`, then "default")')
    .option('--json', 'print JSON instead of text')
    .exitOverride();
  const g = () => program.opts<GlobalOpts>();
  program.command('daemon')
    .description('Run the daemon in the foreground on 127.0.0.1')
    .option('--wire <wire>', 'wire variant: agent, or user for 0.1-era clients (default: $SVC_WIRE, else agent)')
    .action(async (o: { wire?: string }) => {
      const { runDaemon } = await import('../main.js');
      await runDaemon({ port: g().port, wire: o.wire });
    });
  program.command('start').description('Start the daemon in the background (idempotent)').action(() => guard(() => start(g())));
  program.command('stop').description('Stop the background daemon').action(() => guard(() => stop(g())));
  program.command('status').description('Tell whether the daemon answers (exit 3 when not)').action(() => guard(() => status(g())));
  const agent = agentCommands(program);
  for (const ext of cliExtensions) ext({ program, agent });
  return program;
}

/** CLI entry: the `<topic> '<cmd>'` form, else the command tree; usage errors exit 2. */
export async function main(argv: string[]): Promise<void> {
  const { pos, opts } = positionals(argv);
  if (pos.length === 2 && pos[1].trimStart().startsWith('/') && !pos[0].startsWith('-')) {
    await guard(() => execOnce(opts, pos[0], pos[1]));
    return;
  }
  const program = buildProgram();
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      process.exitCode = err.exitCode === 0 ? 0 : 2;
      return;
    }
    throw err;
  }
}

await main(process.argv.slice(2));
