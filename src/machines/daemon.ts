import { enqueueActions, setup, stopChild, type AnyActorRef } from 'xstate';
import { agentMachine, agentSystemId } from './agent.js';
import { childFailure, endedChild, type ChildEndEvent } from './children.js';

/**
 * The root of the actor tree (architecture.md): one actor per daemon whose children are the
 * registered agents (`agent:<id>`, child id = the agent id). It has one state; it only spawns
 * agents and removes the ones that finished (deleted) or failed, so one agent's bug never stops
 * the others.
 */
export type DaemonEvent =
  | { type: 'agent.spawn'; id: string; home: string }
  | ChildEndEvent;


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
    'xstate.done.actor.*': { actions: stopChild(({ event }) => endedChild(event.type)) },
    'xstate.error.actor.*': {
      actions: enqueueActions(({ enqueue, event }) => {
        enqueue({ type: 'reportChildError', params: childFailure(event) });
        enqueue.stopChild(endedChild(event.type));
      }),
    },
  },
});
