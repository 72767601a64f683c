import { examples, globals, guard, type CliParts } from './common.js';

/**
 * `loom mcp [--agent id] [--channel]` (behaviour.md §10.4). The bridge itself (mcpBridge.ts, with the
 * MCP SDK) loads only when this command runs: every other `loom` command, the daemon included,
 * stays without the SDK in memory. It is the one command that registers its agent (as spec §4.8
 * does for /mcp): a host launching it has no terminal to run `loom agent add` in.
 */
export function mcpCli({ program }: CliParts): void {
  examples(program.command('mcp')
    .description('Serve the loom MCP tool on stdio (for hosts that launch a command); starts the daemon if needed')
    .option('--channel', 'forward webhook events as notifications/claude/channel'), [
    'loom --agent leo mcp', 'loom --agent leo mcp --channel',
    'see examples/quickstart/mcp/ for host configuration files',
  ]).action(async (o: { channel?: boolean }) => {
    const { runMcp } = await import('./mcpBridge.js');
    // guard maps a usage error (bad port) to exit 2 like every other command.
    await guard(globals(program), () => runMcp(globals(program), o.channel === true));
    // Open sockets (the event stream, keep-alive) must not keep a finished bridge alive.
    process.exit(process.exitCode ?? 0);
  });
}
