import { agentShelfId, agentShelfMachine, type AgentSpawnEvent } from './agentShelf.js';
import { shelfMachine } from './shelf.js';

/**
 * The root of the actor tree (architecture.md): one actor per daemon, a shelf of the 64 agent
 * shelves (machines/agentShelf.ts). It hands `agent.spawn` to the agent's shelf, spawning the shelf
 * first; a shelf that fails (a bug) is reported and stopped, so one agent's bug never stops the others.
 */
export const daemonMachine = shelfMachine<AgentSpawnEvent>({
  id: 'daemon',
  child: agentShelfMachine,
  open: 'agent.spawn',
  place: (e) => ({ id: agentShelfId(e.profile.id) }),
  forward: true,
});
