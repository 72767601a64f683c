import { CommandRegistry } from './registry.js';
import { helpCommand } from './help.js';
import { infoCommand } from './info.js';
import { topicsCommand } from './topics.js';
import { setCommand, unsetCommand } from './variables.js';
import { execCommand } from './exec.js';
import { unavailableCommand } from './unavailable.js';
import { AGENT_WIRE, type WireDescription } from '../domain/wire.js';

/**
 * Build the registry of built-in commands. Each feature adds its family here with one line. The
 * words of surfaces the wire lacks answer COMMAND_UNSUPPORTED (behaviour.md §11).
 */
export function buildRegistry(wire: WireDescription = AGENT_WIRE): CommandRegistry {
  return new CommandRegistry()
    .register(helpCommand, infoCommand, topicsCommand, setCommand, unsetCommand)
    .register(execCommand)
    .register(...wire.unavailableWords.map((w) => unavailableCommand(w, wire)));
}
