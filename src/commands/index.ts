import { CommandRegistry } from './registry.js';
import { helpCommand } from './help.js';
import { infoCommand } from './info.js';
import { topicsCommand } from './topics.js';
import { setCommand, unsetCommand } from './variables.js';
import { execCommand } from './exec.js';

/**
 * Build the registry of built-in commands. Each feature adds its family here with one line.
 */
export function buildRegistry(): CommandRegistry {
  return new CommandRegistry()
    .register(helpCommand, infoCommand, topicsCommand, setCommand, unsetCommand)
    .register(execCommand);
}
