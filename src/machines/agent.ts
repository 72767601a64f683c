import { assign, setup } from 'xstate';

/**
 * Agent lifecycle. The spec shows no agent table (§3: "Agent and session lifecycle beyond the rows
 * above: not shown"); Loom's is the smallest that matches §4.3: registered agents are `active`
 * (updates keep createdAt) until DELETE /agents/{id} makes them `deleted` (final).
 */
export const agentMachine = setup({
  types: {
    context: {} as { id: string; home: string; updates: number },
    events: {} as { type: 'agent.update'; home: string } | { type: 'agent.delete' },
    input: {} as { id: string; home: string },
  },
}).createMachine({
  id: 'agent',
  context: ({ input }) => ({ id: input.id, home: input.home, updates: 0 }),
  initial: 'active',
  states: {
    active: {
      on: {
        'agent.update': { actions: assign({ home: ({ event }) => event.home, updates: ({ context }) => context.updates + 1 }) },
        'agent.delete': { target: 'deleted' },
      },
    },
    deleted: { type: 'final' },
  },
});
