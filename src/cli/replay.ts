import { examples, globals, type CliParts } from './common.js';

const collect = (v: string, prev: string[] = []) => [...prev, v];

interface ReplayFlags {
  against?: string;
  agentMap?: string[];
  speed?: string;
  set?: string[];
  update?: boolean;
  json?: boolean;
}

/**
 * `loom replay <file>` (behaviour.md §14.3): run a trace against a fresh daemon (or `--against`) and
 * show where today's answers differ. Exit 0 all matched, 1 any differed, 2 usage error, damaged trace
 * or no daemon (the replay's own codes, §14.3). The replayer (src/replay) loads only for this command.
 */
export function replayCli({ program }: CliParts): void {
  examples(program.command('replay <file>')
    .description('Replay a trace and compare the answers (exit 0 same, 1 differed, 2 usage error or no daemon);\n'
      + '<file> is a regular file of this machine (relative to the current folder), at most 256 MiB with lines of at most 16 MiB')
    .option('--against <url>', 'use this running daemon (default: start a fresh one, stop it after)')
    .option('--agent-map <from=to>', 'run a recorded agent as another (repeatable)', collect)
    .option('--speed <x>', 'keep the recorded timing, x times as fast (overlaps reproduce 429 and BUSY)')
    .option('--set <NAME=value>', 'value of ${env:NAME} in the trace (repeatable; default: the environment)', collect)
    .option('--update', 'write the actual answers back as the new expectations')
    .option('--json', 'one JSON object per step, then a summary object'), [
    'loom replay weather.jsonl',
    'loom replay examples/traces/queue-429.jsonl --speed 1',
    'loom replay weather.jsonl --against http://127.0.0.1:3923 --agent-map leo=ana --set API_KEY=abc123',
    'loom replay weather.jsonl --update',
  ]).action(async (file: string, o: ReplayFlags) => {
    const { replay, replayOptions, ReplayUsageError } = await import('../replay/index.js');
    let opts;
    try {
      opts = replayOptions(file, { ...o, json: o.json === true || globals(program).json === true });
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
