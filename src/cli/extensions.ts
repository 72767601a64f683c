import type { Command } from 'commander';
import { mcpCli } from './mcp.js';
import { eventCommands } from './event.js';
import { capabilityCli } from './capability.js';
import { inspectCli } from './inspect.js';

/** The CLI's command tree as features see it. */
export interface CliParts {
  program: Command;
  agent: Command;
}

/** Feature CLI additions (capability, event, mcp); each later issue adds one line. */
export const cliExtensions: Array<(parts: CliParts) => void> = [
  mcpCli,
  eventCommands,
  capabilityCli,
  inspectCli,
];
