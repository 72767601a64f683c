import { assign, setup } from 'xstate';

/**
 * The webhook token of spec §3:
 *
 * | State  | Trigger                   | Next      | Also                                        |
 * | none   | GET /agents/{id}/webhook  | exists    | created if absent, else returned unchanged  |
 * | exists | POST /agents/{id}/webhook | new token | old URL stops working immediately           |
 *
 * Events: `webhook.get` (the GET row; also `/webhook show` and `webhook: true` at POST /agents)
 * and `webhook.post` (the POST row; also `/webhook rotate`). Both carry the fingerprint (SHA-256
 * hex) of a freshly generated candidate token so the machine stays free of I/O and randomness:
 * `webhook.get` uses it only in `none`, `webhook.post` always replaces it ("new token" is
 * `exists` with another fingerprint). The machine never holds the token itself: its snapshot may be
 * streamed to the state inspector, and the token is the only credential of POST /webhook/{token}
 * (behaviour.md §13.4). The token's value lives in the agent registry (behaviour.md §1.1).
 * POST on an agent without a token creates one (the spec shows no row for it; rotating nothing
 * into something is the useful reading). The machine starts in `exists` when the registry already
 * holds a token (tokens persist across restarts).
 */
export interface WebhookTokenContext {
  /** SHA-256 hex of the current token, or null in `none`. */
  fingerprint: string | null;
  rotations: number;
}

export type WebhookTokenEvent = { type: 'webhook.get'; fingerprint: string } | { type: 'webhook.post'; fingerprint: string };

export const webhookTokenMachine = setup({
  types: {
    context: {} as WebhookTokenContext,
    events: {} as WebhookTokenEvent,
    input: {} as { fingerprint: string | null },
  },
  guards: {
    hasToken: ({ context }) => context.fingerprint !== null,
  },
  actions: {
    takeToken: assign({ fingerprint: ({ event }) => event.fingerprint }),
    replaceToken: assign({ fingerprint: ({ event }) => event.fingerprint, rotations: ({ context }) => context.rotations + 1 }),
  },
}).createMachine({
  id: 'webhookToken',
  context: ({ input }) => ({ fingerprint: input.fingerprint, rotations: 0 }),
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
