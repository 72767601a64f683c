import { assign, emit, fromPromise, setup, type PromiseActorLogic } from 'xstate';

/**
 * The webhook token of spec §3:
 *
 * | State  | Trigger                   | Next      | Also                                        |
 * | none   | GET /agents/{id}/webhook  | exists    | created if absent, else returned unchanged  |
 * | exists | POST /agents/{id}/webhook | new token | old URL stops working immediately           |
 *
 * Events: `webhook.get` (the GET row; also `/webhook show` and `webhook: true` at POST /agents)
 * and `webhook.post` (the POST row; also `/webhook rotate`), each with the caller's request id and
 * the fingerprint (SHA-256 hex) of a freshly generated candidate token, so the machine stays free
 * of I/O and randomness. The machine holds the token as its fingerprint and a masked form; the
 * value travels sealed with a request to the `save` actor and serialises as the masked form, since
 * its snapshot may be shown by the state inspector and the token is the only credential of POST
 * /webhook/{token} (behaviour.md §13.4). POST on an agent without a token creates one (the spec shows no row for it; rotating
 * nothing into something is the useful reading). The machine starts in `exists` when the registry
 * already holds a token (tokens persist across restarts).
 *
 * A new token is stored before it counts: each row that takes a candidate goes through `saving`
 * (the provided `save` actor writes it to the registry), and only its success moves the state on
 * and publishes `webhook.changed` (the intake index of services/webhooks.ts is fed from it, in the
 * same step). Requests that arrive meanwhile wait in the actor's own queue and are taken in order,
 * so two rotations never interleave. Every request is answered with the emitted `webhook.answered`.
 */
export interface WebhookTokenContext {
  agentId: string;
  /** SHA-256 hex of the current token, or null in `none`. */
  fingerprint: string | null;
  /** The current token masked (`wh_abcd…`), or null in `none` (or when it was restored without one). */
  masked: string | null;
  rotations: number;
  /** Requests taken so far: the machine gives each its id (`w<n>`) as it arrives. */
  asked: number;
  /** The request being saved, while in `saving`. */
  saving: WebhookRequest | null;
  /** Requests that arrived while another was being saved, oldest first. */
  queue: WebhookRequest[];
}

/**
 * A candidate token, sealed: what the machine may read of it is its fingerprint and masked form;
 * only the `save` actor reveals the value (to store it), and it serialises as the masked form.
 */
export interface SealedToken {
  readonly fingerprint: string;
  readonly masked: string;
  reveal(): string;
  toJSON(): string;
}

/** One GET or POST of the table, with its candidate's fingerprint and the id the machine gave it. */
export type WebhookRequest = { type: 'webhook.get' | 'webhook.post'; requestId: string; fingerprint: string; candidate?: SealedToken };

/** A request as a caller sends it (the machine gives it its id; one raised from the queue keeps its own). */
export type WebhookTokenEvent = Omit<WebhookRequest, 'requestId'> & { requestId?: string };

/** The id of the request the machine took last (what a caller that sent one reads back). */
export const lastRequestId = (context: Pick<WebhookTokenContext, 'asked'>): string => `w${context.asked}`;

/** The answer to one request: `changed` when it made the candidate the token. */
export type WebhookAnswer = { type: 'webhook.answered'; requestId: string; ok: true; changed: boolean } | { type: 'webhook.answered'; requestId: string; ok: false; error: unknown };

/** What the actor publishes when a saved candidate becomes the token (`previous`: the fingerprint it replaced). */
export type WebhookChanged = { type: 'webhook.changed'; agentId: string; fingerprint: string; previous: string | null };

/** What the `save` actor is given: the agent and the candidate to store (absent: a caller sent a fingerprint only). */
export interface WebhookSaveInput {
  agentId: string;
  fingerprint: string;
  candidate?: SealedToken;
}

/** The logic of the `save` actor. */
export type WebhookSaveLogic = PromiseActorLogic<void, WebhookSaveInput>;

const answered = (requestId: string, changed: boolean): WebhookAnswer => ({ type: 'webhook.answered', requestId, ok: true, changed });

/** The machine's setup: its types, the provided `save`, and its guard. */
const base = setup({
  types: {
    context: {} as WebhookTokenContext,
    events: {} as WebhookTokenEvent,
    input: {} as { agentId: string; fingerprint: string | null; masked?: string | null },
    emitted: {} as WebhookAnswer | WebhookChanged,
  },
  actors: {
    /** Store the candidate of a request in the registry (provided by the events feature). */
    save: fromPromise<void, WebhookSaveInput>(async () => undefined),
  },
  guards: {
    hasToken: ({ context }) => context.fingerprint !== null,
  },
});

type Enqueue = Parameters<Parameters<typeof base.enqueueActions>[0]>[0]['enqueue'];

/** The request of an event with its id: given now on arrival, kept when raised from the queue. */
const stamped = (context: WebhookTokenContext, event: WebhookTokenEvent): WebhookRequest =>
  ({ type: event.type, fingerprint: event.fingerprint, requestId: event.requestId ?? lastRequestId({ asked: context.asked + 1 }), ...(event.candidate ? { candidate: event.candidate } : {}) });
/** Arrivals count; requests raised again from the queue were counted when they arrived. */
const counted = (context: WebhookTokenContext, event: WebhookTokenEvent): number => (event.requestId === undefined ? context.asked + 1 : context.asked);
/** The request becomes the one being saved. */
const save = base.assign(({ context, event }) => ({ saving: stamped(context, event), asked: counted(context, event) }));

/** A request that arrives while another is saved waits in the queue. */
const wait = base.assign(({ context, event }) => ({ queue: [...context.queue, stamped(context, event)], asked: counted(context, event) }));

/** The saved candidate becomes the token, in this step. */
const take = base.enqueueActions(({ enqueue, context }) => {
  const r = context.saving as WebhookRequest;
  enqueue.assign({ fingerprint: r.fingerprint, masked: r.candidate?.masked ?? null, saving: null });
  enqueue.emit({ type: 'webhook.changed', agentId: context.agentId, fingerprint: r.fingerprint, previous: context.fingerprint });
  enqueue.emit(answered(r.requestId, true));
});

/** The candidate could not be stored: nothing changes, the caller hears why. */
const refuse = base.enqueueActions(({ enqueue, context, event }) => {
  const r = context.saving as WebhookRequest;
  enqueue.assign({ saving: null });
  enqueue.emit({ type: 'webhook.answered', requestId: r.requestId, ok: false, error: (event as { error?: unknown }).error });
});

/** Take the next waiting request, if any. */
const next = base.enqueueActions(({ enqueue, context }: { enqueue: Enqueue; context: WebhookTokenContext }) => {
  const [first, ...rest] = context.queue;
  if (!first) return;
  enqueue.assign({ queue: rest });
  enqueue.raise(first);
});

/**
 * The `saving` substate of `none` and `exists`: the mailbox keeps later requests waiting while the
 * `save` actor stores the token; done, it goes to `target` with `done`; failed, back to idle.
 */
function savingState(target: string, done: Array<typeof take | typeof next | ReturnType<typeof base.assign>>) {
  return {
    on: { 'webhook.get': { actions: wait }, 'webhook.post': { actions: wait } },
    invoke: {
      id: 'save',
      src: 'save' as const,
      input: ({ context }: { context: WebhookTokenContext }) => {
        const r = context.saving as WebhookRequest;
        return { agentId: context.agentId, fingerprint: r.fingerprint, ...(r.candidate ? { candidate: r.candidate } : {}) };
      },
      onDone: { target, actions: done },
      onError: { target: 'idle', actions: [refuse, next] },
    },
  };
}

export const webhookTokenMachine = base.createMachine({
  id: 'webhookToken',
  context: ({ input }) => ({ agentId: input.agentId, fingerprint: input.fingerprint, masked: input.masked ?? null, rotations: 0, asked: 0, saving: null, queue: [] }),
  initial: 'restore',
  states: {
    /** Transient: pick the stored state. */
    restore: { always: [{ guard: 'hasToken', target: 'exists' }, { target: 'none' }] },
    none: {
      initial: 'idle',
      states: {
        idle: {
          on: {
            'webhook.get': { target: 'saving', actions: save },
            'webhook.post': { target: 'saving', actions: save },
          },
        },
        saving: savingState('#webhookToken.exists', [take, next]),
      },
    },
    exists: {
      initial: 'idle',
      states: {
        idle: {
          on: {
            // GET in `exists` is no transition at all: the token is returned unchanged.
            'webhook.get': {
              actions: [
                emit(({ context, event }) => answered(stamped(context, event).requestId, false)),
                assign({ asked: ({ context, event }) => counted(context, event) }),
              ],
            },
            'webhook.post': { target: 'saving', actions: save },
          },
        },
        saving: savingState('idle', [take, base.assign({ rotations: ({ context }) => context.rotations + 1 }), next]),
      },
    },
  },
});
