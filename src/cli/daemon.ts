import { Option } from 'commander';
import { examples, globals, type CliParts } from './common.js';
import { enableCompileCache } from './compileCache.js';

/**
 * `loom daemon [--wire agent|user] [--quiet]` (behaviour.md §1.1): the daemon in the foreground. The
 * composition root loads only through daemonEntry.ts (a documented exception of the dependency
 * rule), so no other command carries the server in memory. The entry (main.ts) reads the usual
 * lines itself (daemonArgs.ts, daemonForm); these declarations serve `--help` and every other line. The
 * wire (behaviour.md §11) is `--wire`, else SVC_WIRE; the daemon refuses any other value (exit 2).
 */
/**
 * The daemon's own options, one list for `loom daemon` and `loom start` (which passes each one given
 * to the daemon it starts), so the two cannot drift apart.
 */
export function daemonOptions(): Option[] {
  return [
    new Option('--wire <wire>', 'agent, or user for clients of the earlier user-based wire (default: $SVC_WIRE, else agent)'),
    new Option('--quiet', 'no line per request on the terminal (the request log is still written; loom logs shows it)'),
    new Option('--record <file>', 'record every command from start-up into this trace file (JSONL; replay it with loom replay)'),
    new Option('--sandbox <mode>', 'none, or workspace to confine agents registered without a mode to their workspace (default: $SVC_SANDBOX, else none)'),
  ];
}

/** The command line that gives a started daemon the options of `daemonOptions` that were set. */
export function daemonOptionArgs(values: Record<string, unknown>): string[] {
  const args: string[] = [];
  for (const o of daemonOptions()) {
    const v = values[o.attributeName()];
    if (v === undefined || v === false) continue;
    args.push(o.long as string, ...(o.isBoolean() ? [] : [String(v)]));
  }
  return args;
}

export function daemonCli({ program }: CliParts): void {
  const cmd = program.command('daemon').description('Run the daemon in the foreground on 127.0.0.1 (what `npm start` does)');
  for (const o of daemonOptions()) cmd.addOption(o);
  examples(cmd
    // The private daemon of `loom replay`: it lives as long as the pipe on its stdin (so every way the
    // replay ends, kill -9 included, ends it) and its temp data folder goes with it. Not for users.
    .addOption(new Option('--exit-with-stdin').hideHelp())
    .addOption(new Option('--remove-data-dir').hideHelp()), [
    'loom daemon', 'loom --port 4000 daemon --quiet', 'loom daemon --wire user', 'loom daemon --record session.jsonl', 'loom daemon --sandbox workspace',
  ]).action(async (o: { wire?: string; quiet?: boolean; record?: string; sandbox?: string; exitWithStdin?: boolean; removeDataDir?: boolean }) => {
    // Before the composition root loads, so its compiled code can come from the cache.
    enableCompileCache();
    const { runDaemon } = await import('./daemonEntry.js');
    // `loom --wire user daemon` and `loom daemon --wire user` alike.
    await runDaemon({ port: globals(program).port, wire: o.wire ?? globals(program).wire, quiet: o.quiet === true, record: o.record, sandbox: o.sandbox,
      exitWithStdin: o.exitWithStdin === true, removeDataDir: o.removeDataDir === true });
  });
}
