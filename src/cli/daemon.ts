import { examples, globals, guard, UsageError, type CliParts } from './common.js';

/**
 * `loom daemon [--wire agent|user] [--quiet]` (behaviour.md §1.1): the daemon in the foreground. The
 * composition root loads only here (a documented exception of the dependency rule), so no other
 * command carries the server in memory.
 */
export function daemonCli({ program }: CliParts): void {
  examples(program.command('daemon')
    .description('Run the daemon in the foreground on 127.0.0.1 (what `npm start` does)')
    .option('--wire <wire>', 'wire variant: agent (only agent is implemented)', 'agent')
    .option('--quiet', 'no line per request on the terminal (the request log is still written; loom logs shows it)')
    .option('--record <file>', 'record every command from start-up into this trace file (JSONL; replay it with loom replay)'), [
    'loom daemon', 'loom --port 4000 daemon --quiet', 'loom daemon --record session.jsonl',
  ]).action(async (o: { wire: string; quiet?: boolean; record?: string }) => {
    if (o.wire !== 'agent') {
      await guard(globals(program), async () => {
        throw new UsageError(`loom: --wire ${o.wire} is not supported by this build (use agent)`);
      });
      return;
    }
    const { runDaemon } = await import('../main.js');
    await runDaemon({ port: globals(program).port, wire: 'agent', quiet: o.quiet === true, record: o.record });
  });
}
