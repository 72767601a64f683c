import { AGENT_WIRE, WIRES, type WireDescription } from '../domain/wire.js';
import type { CommandContext } from './types.js';

/**
 * The wire the daemon serves, as commands see it (behaviour.md §11: "agent" read as "user" in what
 * they print; the user wire's topic types). A context built without daemon facts is the agent wire.
 */
export function wireOf(ctx: Pick<CommandContext, 'services'>): WireDescription {
  const name = ctx.services.info?.wire;
  return name !== undefined ? WIRES[name] : AGENT_WIRE;
}
