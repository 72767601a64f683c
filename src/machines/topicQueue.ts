import { assign, cancel, enqueueActions, fromPromise, setup } from 'xstate';

/**
 * The topic command queue of spec §3:
 *
 * | State     | Trigger              | Condition              | Next                    | Also          |
 * | idle      | command arrives      |                        | executing               |               |
 * | executing | command arrives      | fewer than 5 waiting   | executing, queue grows  |               |
 * | executing | command arrives      | 5 already queued       | unchanged               | 429 QUEUE_FULL|
 * | queued    | waits > 120000 ms    |                        | removed                 | 504 QUEUE_TIMEOUT |
 * | queued    | client disconnects   |                        | removed                 | no response   |
 *
 * Plus the MCP rule (spec §4.8, behaviour.md §10.3): `command.try` runs only when idle and is
 * refused with BUSY otherwise, atomically in one transition.
 *
 * The machine does no I/O: starting, refusing and running a command are the named actions
 * `startTicket`, `refuseTicket` and the named actor `runCommand`, provided by src/actors.
 */

/** What the queue knows of a command: an opaque id. */
export interface QueueTicket {
  id: string;
}

/** Why a ticket is refused without running. */
export type RefusalReason = 'QUEUE_FULL' | 'QUEUE_TIMEOUT' | 'BUSY';

export interface TopicQueueContext {
  running: QueueTicket | null;
  waiting: QueueTicket[];
  maxWaiting: number;
  waitMs: number;
}

export type TopicQueueEvent =
  | { type: 'command.arrive'; ticket: QueueTicket }
  | { type: 'command.try'; ticket: QueueTicket }
  | { type: 'command.leave'; ticketId: string }
  | { type: 'command.expire'; ticketId: string };

/** Delayed-event id of a waiting ticket's expiry. */
export const expiryId = (ticketId: string): string => `expire:${ticketId}`;

export const topicQueueMachine = setup({
  types: {
    context: {} as TopicQueueContext,
    events: {} as TopicQueueEvent,
    input: {} as { maxWaiting: number; waitMs: number },
  },
  actions: {
    startTicket: (_args, _params: { ticket: QueueTicket }) => {},
    refuseTicket: (_args, _params: { ticket: QueueTicket; reason: RefusalReason }) => {},
    /** Move the oldest waiting ticket to running (FIFO, spec §3) and cancel its expiry. */
    dequeue: enqueueActions(({ enqueue, context }) => {
      const [next, ...rest] = context.waiting;
      enqueue.cancel(expiryId(next.id));
      enqueue.assign({ running: next, waiting: rest });
    }),
  },
  actors: {
    runCommand: fromPromise<void, { ticket: QueueTicket }>(async () => {}),
  },
  guards: {
    queueHasRoom: ({ context }) => context.waiting.length < context.maxWaiting,
    hasWaiting: ({ context }) => context.waiting.length > 0,
    isWaiting: ({ context, event }) =>
      'ticketId' in event && context.waiting.some((t) => t.id === event.ticketId),
  },
}).createMachine({
  id: 'topicQueue',
  context: ({ input }) => ({ running: null, waiting: [], maxWaiting: input.maxWaiting, waitMs: input.waitMs }),
  initial: 'idle',
  states: {
    idle: {
      on: {
        'command.arrive': {
          target: 'executing',
          actions: [
            assign({ running: ({ event }) => event.ticket }),
            { type: 'startTicket', params: ({ event }) => ({ ticket: event.ticket }) },
          ],
        },
        'command.try': {
          target: 'executing',
          actions: [
            assign({ running: ({ event }) => event.ticket }),
            { type: 'startTicket', params: ({ event }) => ({ ticket: event.ticket }) },
          ],
        },
      },
    },
    executing: {
      invoke: {
        id: 'runCommand',
        src: 'runCommand',
        input: ({ context }) => ({ ticket: context.running as QueueTicket }),
        onDone: [{ guard: 'hasWaiting', target: 'executing', reenter: true, actions: ['dequeue', { type: 'startTicket', params: ({ context }) => ({ ticket: context.running as QueueTicket }) }] }, { target: 'idle', actions: assign({ running: null }) }],
        onError: [{ guard: 'hasWaiting', target: 'executing', reenter: true, actions: ['dequeue', { type: 'startTicket', params: ({ context }) => ({ ticket: context.running as QueueTicket }) }] }, { target: 'idle', actions: assign({ running: null }) }],
      },
      on: {
        'command.arrive': [
          {
            guard: 'queueHasRoom',
            actions: enqueueActions(({ enqueue, event, context }) => {
              enqueue.assign({ waiting: [...context.waiting, event.ticket] });
              enqueue.raise({ type: 'command.expire', ticketId: event.ticket.id }, { id: expiryId(event.ticket.id), delay: context.waitMs });
            }),
          },
          { actions: { type: 'refuseTicket', params: ({ event }) => ({ ticket: event.ticket, reason: 'QUEUE_FULL' as const }) } },
        ],
        'command.try': {
          actions: { type: 'refuseTicket', params: ({ event }) => ({ ticket: event.ticket, reason: 'BUSY' as const }) },
        },
        'command.leave': {
          guard: 'isWaiting',
          actions: [
            cancel(({ event }) => expiryId(event.ticketId)),
            assign({ waiting: ({ context, event }) => context.waiting.filter((t) => t.id !== event.ticketId) }),
          ],
        },
        'command.expire': {
          guard: 'isWaiting',
          actions: enqueueActions(({ enqueue, event, context }) => {
            const ticket = context.waiting.find((t) => t.id === event.ticketId) as QueueTicket;
            enqueue.assign({ waiting: context.waiting.filter((t) => t.id !== event.ticketId) });
            enqueue({ type: 'refuseTicket', params: { ticket, reason: 'QUEUE_TIMEOUT' } });
          }),
        },
      },
    },
  },
});
