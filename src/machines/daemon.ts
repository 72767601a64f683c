import { enqueueActions, setup, type AnyActorRef } from 'xstate';
import { agentShelfId, agentShelfMachine } from './agentShelf.js';
import { childFailure, endedChild, type ChildEndEvent } from './children.js';

/**
 * The root of the actor tree (architecture.md): one actor per daemon. The registered agents
 * (`agent:<id>`, child id = the agent id) sit on 64 agent shelves below it (machines/agentShelf.ts
 * says why). It has one state; it only hands `agent.spawn` to the agent's shelf, which spawns the
 * agent and removes it when it finished (deleted) or failed, so one agent's bug never stops the others.
 */
export type DaemonEvent =
  | { type: 'agent.spawn'; id: string; home: string }
  | ChildEndEvent;

export const daemonMachine = setup({
  types: {
    events: {} as DaemonEvent,
  },
  actors: {
    agentShelf: agentShelfMachine,
  },
  actions: {
    reportChildError: (_args, _params: { childId: string; error: unknown }) => {},
  },
}).createMachine({
  id: 'daemon',
  on: {
    'agent.spawn': {
      actions: enqueueActions(({ enqueue, event, self }) => {
        const shelf = agentShelfId(event.id);
        const children = (self.getSnapshot() as { children: Record<string, AnyActorRef> }).children;
        if (!Object.hasOwn(children, shelf)) enqueue.spawnChild('agentShelf', { id: shelf });
        enqueue.sendTo(shelf, event);
      }),
    },
    // A shelf never ends by itself; one that fails (a bug) is reported and stopped.
    'xstate.error.actor.*': {
      actions: enqueueActions(({ enqueue, event }) => {
        enqueue({ type: 'reportChildError', params: childFailure(event) });
        enqueue.stopChild(endedChild(event.type));
      }),
    },
  },
});
