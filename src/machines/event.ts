import { setup, transition } from 'xstate';

/**
 * The event lifecycle of spec §3:
 *
 * | State             | Trigger                | Condition         | Next    | Also                                   |
 * | (none)            | POST /webhook/<token>  | valid token, body | pending | event id returned; delivered to streams|
 * | pending           | `/events.ack <id>`     |                   | acked   |                                        |
 * | acked             | `/events.clear`        |                   | deleted | only acked events are removed          |
 * | pending or acked  | `/events.clear --all`  |                   | deleted | all events removed                     |
 *
 * Events of this machine name those triggers: `webhook.post`, `events.ack`, `events.clear`,
 * `events.clear.all`. Two non-rows are explicit so that callers need no special cases:
 * acking an acked event keeps it acked (behaviour.md §2.10 "already acked") and `/events.clear`
 * leaves a pending event pending. Stream delivery is not a trigger: it never acknowledges.
 *
 * The machine is context-free; the inbox holds one status per event and asks `nextEventState`
 * for the next one instead of running an actor per event (100 000 pending events are normal).
 */
export type EventTrigger = 'webhook.post' | 'events.ack' | 'events.clear' | 'events.clear.all';

/** The states of the table; `none` is the "(none)" row, `deleted` is final. */
export type EventState = 'none' | 'pending' | 'acked' | 'deleted';

export const eventMachine = setup({
  types: {
    events: {} as { type: EventTrigger },
  },
}).createMachine({
  id: 'event',
  initial: 'none',
  states: {
    none: { on: { 'webhook.post': 'pending' } },
    pending: {
      on: {
        'events.ack': 'acked',
        'events.clear.all': 'deleted',
      },
    },
    acked: {
      on: {
        'events.clear': 'deleted',
        'events.clear.all': 'deleted',
      },
    },
    deleted: { type: 'final' },
  },
});

const memo = new Map<string, EventState>();

/**
 * The state after `trigger` in `state`, computed by the machine (pure transition). An event the
 * state does not accept leaves it unchanged. Memoised: the machine has no context, so each
 * (state, trigger) pair always has the same answer.
 */
export function nextEventState(state: EventState, trigger: EventTrigger): EventState {
  const key = `${state} ${trigger}`;
  let next = memo.get(key);
  if (next === undefined) {
    const snapshot = eventMachine.resolveState({ value: state, context: {} });
    const [after] = transition(eventMachine, snapshot, { type: trigger });
    next = after.value as EventState;
    memo.set(key, next);
  }
  return next;
}
