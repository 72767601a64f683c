import { enqueueActions, setup, stopChild, type AnyActorRef } from 'xstate';
import { agentMachine, agentSystemId } from './agent.js';

/**
 * The root of the actor tree (architecture.md): one actor per daemon whose children are the
 * registered agents (`agent:<id>`, child id = the agent id). It has one state; it only spawns
 * agents and removes the ones that finished (deleted) or failed, so one agent's bug never stops
 * the others.
 */
export type DaemonEvent =
  | { type: 'agent.spawn'; id: string; home: string }
  | { type: `xstate.done.actor.${string}`; output?: unknown }
  | { type: `xstate.error.actor.${string}`; error: unknown };

const DONE_PREFIX = 'xstate.done.actor.';
const ERROR_PREFIX = 'xstate.error.actor.';

export const daemonMachine = setup({
  types: {
    events: {} as DaemonEvent,
  },
  actors: {
    agent: agentMachine,
  },
  actions: {
    reportChildError: (_args, _params: { childId: string; error: unknown }) => {},
  },
}).createMachine({
  id: 'daemon',
  on: {
    'agent.spawn': {
      actions: enqueueActions(({ enqueue, event, self }) => {
        const children = (self.getSnapshot() as { children: Record<string, AnyActorRef> }).children;
        // Object.hasOwn: an agent id such as `toString` is not a child because a plain object inherits it (issue 12).
        if (!Object.hasOwn(children, event.id)) enqueue.spawnChild('agent', { id: event.id, systemId: agentSystemId(event.id), input: { id: event.id, home: event.home } });
      }),
    },
    // A deleted agent (final state) leaves the tree.
    'xstate.done.actor.*': { actions: stopChild(({ event }) => event.type.slice(DONE_PREFIX.length)) },
    'xstate.error.actor.*': {
      actions: enqueueActions(({ enqueue, event }) => {
        const childId = event.type.slice(ERROR_PREFIX.length);
        enqueue({ type: 'reportChildError', params: { childId, error: 'error' in event ? event.error : undefined } });
        enqueue.stopChild(childId);
      }),
    },
  },
});
