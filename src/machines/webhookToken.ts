import { assign, setup } from 'xstate';

/**
 * The webhook token of spec §3:
 *
 * | State  | Trigger                   | Next      | Also                                        |
 * | none   | GET /agents/{id}/webhook  | exists    | created if absent, else returned unchanged  |
 * | exists | POST /agents/{id}/webhook | new token | old URL stops working immediately           |
 *
 * Events: `webhook.get` (the GET row; also `/webhook show` and `webhook: true` at POST /agents)
 * and `webhook.post` (the POST row; also `/webhook rotate`). Both carry a freshly generated
 * candidate token so the machine stays free of I/O and randomness: `webhook.get` uses it only in
 * `none`, `webhook.post` always replaces the token ("new token" is `exists` with another token).
 * POST on an agent without a token creates one (the spec shows no row for it; rotating nothing
 * into something is the useful reading). The machine starts in `exists` when the registry already
 * holds a token (tokens persist across restarts).
 */
export interface WebhookTokenContext {
  token: string | null;
  rotations: number;
}

export type WebhookTokenEvent = { type: 'webhook.get'; token: string } | { type: 'webhook.post'; token: string };

export const webhookTokenMachine = setup({
  types: {
    context: {} as WebhookTokenContext,
    events: {} as WebhookTokenEvent,
    input: {} as { token: string | null },
  },
  guards: {
    hasToken: ({ context }) => context.token !== null,
  },
  actions: {
    takeToken: assign({ token: ({ event }) => event.token }),
    replaceToken: assign({ token: ({ event }) => event.token, rotations: ({ context }) => context.rotations + 1 }),
  },
}).createMachine({
  id: 'webhookToken',
  context: ({ input }) => ({ token: input.token, rotations: 0 }),
  initial: 'restore',
  states: {
    /** Transient: pick the stored state. */
    restore: { always: [{ guard: 'hasToken', target: 'exists' }, { target: 'none' }] },
    none: {
      on: {
        'webhook.get': { target: 'exists', actions: 'takeToken' },
        'webhook.post': { target: 'exists', actions: 'takeToken' },
      },
    },
    exists: {
      on: {
        // GET in `exists` is no transition at all: the token is returned unchanged.
        'webhook.post': { target: 'exists', actions: 'replaceToken' },
      },
    },
  },
});
