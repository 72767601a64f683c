import { enqueueActions, setup, stopChild, type AnyActorRef } from 'xstate';
import { agentMachine, agentSystemId } from './agent.js';
import { childFailure, childrenOf, endedChild, type ChildEndEvent } from './children.js';

/**
 * A shelf of agent actors under the daemon root (architecture.md, "The actor tree"): not a spec
 * table, a container, like the capability shelves (machines/capabilityShelf.ts says why: XState
 * copies a parent's whole `children` object on every spawn and stop). Agents are spread over 64
 * shelves by a hash of their id, so registering, loading and stopping n agents costs O(n) copies of
 * ~n/64 entries instead of O(n²) (1,000 agents: ~265 ms of start-up and ~2 s of shutdown CPU before).
 * Shelves have no system id; agents keep theirs (`agent:<id>`, behaviour.md §13.3).
 */

export type AgentShelfEvent = { type: 'agent.spawn'; id: string; home: string } | ChildEndEvent;

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


/** Every agent actor under the root, as [agent id, actor] (ids are the agents' child ids on their shelves). */
export function agentsOf(root: AnyActorRef): Array<[string, AnyActorRef]> {
  const out: Array<[string, AnyActorRef]> = [];
  for (const [id, shelf] of Object.entries(childrenOf(root))) {
    if (!shelf || !id.startsWith(AGENT_SHELF_PREFIX)) continue;
    for (const [agentId, agent] of Object.entries(childrenOf(shelf))) if (agent) out.push([agentId, agent]);
  }
  return out;
}

export const agentShelfMachine = setup({
  types: {
    events: {} as AgentShelfEvent,
  },
  actors: {
    agent: agentMachine,
  },
  actions: {
    /** An agent failed (a bug below): said by src/actors; the agent is stopped, its siblings go on. */
    reportChildError: (_args, _params: { childId: string; error: unknown }) => {},
  },
}).createMachine({
  id: 'agentShelf',
  on: {
    'agent.spawn': {
      actions: enqueueActions(({ enqueue, event, self }) => {
        // Object.hasOwn: an agent id such as `toString` is not a child because a plain object inherits it (issue 12).
        if (!Object.hasOwn(childrenOf(self), event.id)) enqueue.spawnChild('agent', { id: event.id, systemId: agentSystemId(event.id), input: { id: event.id, home: event.home } });
      }),
    },
    // A deleted agent (final state) leaves the tree.
    'xstate.done.actor.*': { actions: stopChild(({ event }) => endedChild(event.type)) },
    'xstate.error.actor.*': {
      actions: enqueueActions(({ enqueue, event }) => {
        enqueue({ type: 'reportChildError', params: childFailure(event) });
        enqueue.stopChild(endedChild(event.type));
      }),
    },
  },
});
