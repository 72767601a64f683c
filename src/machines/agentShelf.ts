import type { AnyActorRef } from 'xstate';
import { agentMachine, agentSystemId, type AgentProfile } from './agent.js';
import { onShelves, shelfMachine } from './shelf.js';

/**
 * The agent shelves under the daemon root (machines/shelf.ts says why shelves): agents are spread
 * over 64 shelves by a hash of their id, so registering, loading and stopping n agents copies
 * ~n/64 children per change instead of n. Agents keep their system ids (`agent:<id>`, behaviour.md §13.3).
 */

/** Spawn an agent actor from its profile (the directory sends it when the agent wakes). */
export type AgentSpawnEvent = { type: 'agent.spawn'; profile: AgentProfile; registered: boolean };

/** Shelves under the root. */
const SHELVES = 64;
/** Child-id prefix of the shelves under the root. */
export const AGENT_SHELF_PREFIX = 'agents:';

/** The shelf of an agent id: FNV-1a of the id, so ids that share a prefix (`a1`…`a999`) still spread. */
export function agentShelfId(agentId: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < agentId.length; i++) h = Math.imul(h ^ agentId.charCodeAt(i), 0x01000193);
  return `${AGENT_SHELF_PREFIX}${(h >>> 0) % SHELVES}`;
}

/** Every agent actor under the root, as [agent id, actor]. */
export function agentsOf(root: AnyActorRef): Array<[string, AnyActorRef]> {
  return onShelves(root, AGENT_SHELF_PREFIX);
}

/** One shelf of agents: child id = the agent id. */
export const agentShelfMachine = shelfMachine<AgentSpawnEvent>({
  id: 'agentShelf',
  child: agentMachine,
  open: 'agent.spawn',
  place: (e) => ({ id: e.profile.id, systemId: agentSystemId(e.profile.id), input: { profile: e.profile, registered: e.registered } }),
});
