import { guard, type GlobalOpts } from './common.js';
import type { CliParts } from './extensions.js';

/**
 * Hook `loom mcp` into the CLI (src/cli/extensions.ts). The bridge itself (mcpBridge.ts, with the MCP
 * SDK) loads only when this command runs: every other `loom` command, the daemon included, stays
 * without the SDK in memory.
 */
export function mcpCli({ program }: CliParts): void {
  program.command('mcp')
    .description('Serve the loom MCP tool on stdio (for hosts that launch a command); starts the daemon if needed')
    .option('--channel', 'forward webhook events as notifications/claude/channel')
    .action(async (o: { channel?: boolean }) => {
      const { runMcp } = await import('./mcpBridge.js');
      // guard maps a usage error (bad port) to exit 2 like every other command.
      await guard(() => runMcp(program.opts<GlobalOpts>(), o.channel === true));
      // Open sockets (the event stream, keep-alive) must not keep a finished bridge alive.
      process.exit(process.exitCode ?? 0);
    });
}
