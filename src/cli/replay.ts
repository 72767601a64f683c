import type { Command } from 'commander';
import type { GlobalOpts } from './common.js';

const collect = (v: string, prev: string[] = []) => [...prev, v];

/**
 * `loom replay <file>` (behaviour.md §14.3): run a trace against a fresh daemon (or `--against`)
 * and show where today's answers differ. Exit 0 all matched, 1 any differed, 2 usage error or no
 * daemon. The replayer (src/replay) loads only when this command runs.
 */
export function replayCli({ program }: { program: Command }): void {
  program.command('replay <file>')
    .description('Replay a trace file and compare the answers (exit 0 same, 1 differed, 2 usage/daemon)')
    .option('--against <url>', 'use this running daemon (default: start a fresh one and stop it after)')
    .option('--agent-map <from=to>', 'run a recorded agent as another (repeatable)', collect)
    .option('--speed <x>', 'keep the recorded timing, x times as fast (overlaps reproduce 429/BUSY)')
    .option('--set <NAME=value>', 'value for ${env:NAME} in the trace (repeatable; default: the environment)', collect)
    .option('--update', 'write the actual answers back as the new expectations')
    .option('--json', 'one JSON object per step, then a summary object')
    .action(async (file: string, o: { against?: string; agentMap?: string[]; speed?: string; set?: string[]; update?: boolean; json?: boolean }) => {
      const { replay, replayOptions, ReplayUsageError } = await import('../replay/index.js');
      const json = o.json === true || program.opts<GlobalOpts>().json === true;
      let opts;
      try {
        opts = replayOptions(file, { ...o, json });
      } catch (err) {
        if (!(err instanceof ReplayUsageError)) throw err;
        process.stderr.write(`loom replay: ${err.message}\n`);
        process.exitCode = 2;
        return;
      }
      process.exitCode = await replay(opts, {
        out: (l) => process.stdout.write(`${l}\n`),
        err: (l) => process.stderr.write(`${l}\n`),
        env: process.env,
      });
    });
}
