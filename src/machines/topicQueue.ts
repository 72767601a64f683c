import { assign, cancel, emit, enqueueActions, setup, stopChild, type AnyActorRef, type ParameterizedObject } from 'xstate';
import { commandOutput } from '../domain/output.js';
import { fail } from '../domain/result.js';
import { applySessionChange, newSession, sessionMeta, type SessionChange, type SessionEvent, type SessionState } from '../domain/session.js';
import type { CommandEvent, ExecResult, QueueLimits, RefusalReason, Ticket } from '../domain/ticket.js';
import type { TopicRef } from '../domain/topic.js';
import { SHELL_CHILD_ID, shellMachine, shellSystemId, type ShellInput } from './shell.js';

/**
 * A topic (spec §2 Topic) and its command queue, spec §3:
 *
 * | State     | Trigger              | Condition              | Next                    | Also              |
 * | idle      | command arrives      |                        | executing               |                   |
 * | executing | command arrives      | fewer than 5 waiting   | executing, queue grows  |                   |
 * | executing | command arrives      | 5 already queued       | unchanged               | 429 QUEUE_FULL    |
 * | queued    | waits > 120000 ms    |                        | removed                 | 504 QUEUE_TIMEOUT |
 * | queued    | client disconnects   |                        | removed                 | no response       |
 *
 * Plus the MCP rule (spec §4.8, behaviour.md §10.3): `command.try` runs only when idle and is
 * refused with BUSY otherwise, atomically in one transition; and the session rules of
 * behaviour.md §1.3: `session.close` (DELETE /sessions, home change) ends the session — a quiet
 * topic ends with it (`closed`), a busy one goes on with a fresh session — and `agent.delete`
 * answers every ticket and ends the topic.
 *
 * The topic owns its tickets (cmd, request_id, via, times) and its session. It does no I/O:
 * starting a command is the provided action `runTicket`; the command's result comes back as the
 * event `command.done`; ending a session's resources is `disposeSession`. Its outputs are the
 * emitted `command.*` events of domain/ticket.ts.
 *
 * A `bash:<name>` topic owns its persistent shell as the child `shell` (machines/shell.ts), spawned
 * on `shell.open` (the first /exec). The shell belongs to the session: a renewed session closes it,
 * a closed topic stops it, and a shell that ended leaves the tree (the next /exec spawns a new one).
 */

export interface TopicInput {
  agentId: string;
  ref: TopicRef;
  maxWaiting: number;
  waitMs: number;
  /** Creation time of the first session. */
  now: number;
  /** The owner's noun in messages (`Agent`; `User` on the user wire, behaviour.md §11). */
  owner?: string;
}

export interface TopicQueueContext {
  agentId: string;
  ref: TopicRef;
  session: SessionState;
  running: Ticket | null;
  waiting: Ticket[];
  /** Tickets issued so far: the next id is `t<issued + 1>`. */
  issued: number;
  limits: QueueLimits;
  owner: string;
}

export type TopicQueueEvent =
  | { type: 'command.arrive'; ticket: NewTicket }
  | { type: 'command.try'; ticket: NewTicket }
  | { type: 'command.leave'; ticketId: string }
  | { type: 'command.expire'; ticketId: string }
  | { type: 'command.done'; ticketId: string; result: ExecResult; at: number }
  | { type: 'session.close'; at: number }
  /** A change a command (of this topic or another) made to the session `sessionId`. */
  | { type: 'session.change'; sessionId: number; change: SessionChange; at: number }
  | { type: 'agent.delete'; at: number }
  | { type: 'shell.open'; input: ShellInput }
  // The shell child ended or failed (XState's own events).
  | { type: `xstate.done.actor.${typeof SHELL_CHILD_ID}` }
  | { type: `xstate.error.actor.${typeof SHELL_CHILD_ID}`; error: unknown };

/** The context a topic starts with. */
export function initialTopicContext(input: TopicInput): TopicQueueContext {
  return {
    agentId: input.agentId, ref: input.ref, session: newSession(input.agentId, input.ref, input.now),
    running: null, waiting: [], issued: 0, limits: { max: input.maxWaiting, waitMs: input.waitMs }, owner: input.owner ?? 'Agent',
  };
}

/** Delayed-event id of a waiting ticket's expiry. */
export const expiryId = (ticketId: string): string => `expire:${ticketId}`;

/** A ticket as a caller sends it: the topic gives it its id as it takes it. */
export type NewTicket = Omit<Ticket, 'id'>;

/** The id of the ticket the topic took last (what a caller that sent one reads back). */
export const lastTicketId = (context: Pick<TopicQueueContext, 'issued'>): string => ticketIdAt(context.issued);

/** The id of the `n`-th ticket of a topic. */
const ticketIdAt = (n: number): string => `t${n}`;

/**
 * The arriving ticket with the id the topic gives it (and its start time, when it starts at once).
 * Every ticket is made here, field by field, so all tickets share one object shape.
 */
const issue = (context: Pick<TopicQueueContext, 'issued'>, ticket: NewTicket, startedAt: number | null = ticket.startedAt): Ticket =>
  withStart(ticketIdAt(context.issued + 1), ticket, startedAt);

/** A ticket with its id and start time. */
const withStart = (id: string, t: NewTicket, startedAt: number | null): Ticket => ({ cmd: t.cmd, requestId: t.requestId, via: t.via, queuedAt: t.queuedAt, startedAt, id });

type Ctx = TopicQueueContext;

/**
 * The ticket an event names, by its type (an `in` test on events of many shapes is a slow lookup
 * on every command).
 */
function ticketIdOf(event: TopicQueueEvent): string | undefined {
  switch (event.type) {
    case 'command.done':
    case 'command.leave':
    case 'command.expire':
      return event.ticketId;
    default:
      return undefined;
  }
}

const hasShell = (self: AnyActorRef): boolean => Object.hasOwn((self.getSnapshot() as { children: Record<string, AnyActorRef> }).children, SHELL_CHILD_ID);

/** The named actions the helper actions below enqueue (typed by hand: `extend` cannot see its own siblings). */
type NamedAction =
  | { type: 'runTicket'; params: { ticket: Ticket; session: SessionState } }
  | { type: 'disposeSession'; params: { session: SessionState } }
  | { type: 'reportShellError'; params: { error: unknown } };

/** `enqueueActions` typed for this machine, with params `P`. */
const enqueueTyped = <P extends ParameterizedObject['params']>(
  collect: Parameters<typeof enqueueActions<Ctx, TopicQueueEvent, P, TopicQueueEvent, never, NamedAction, never, never, CommandEvent | SessionEvent>>[0],
) => enqueueActions<Ctx, TopicQueueEvent, P, TopicQueueEvent, never, NamedAction, never, never, CommandEvent | SessionEvent>(collect);
// The emitted events are written out as literals (no spread of a common part): each event type then
// has one fixed shape, which the listeners of every topic read.

/** The `command.started` event of the running ticket. */
function started(c: Ctx): CommandEvent {
  const t = c.running as Ticket;
  return { type: 'command.started', agentId: c.agentId, topic: c.ref.topic, ticket: t, at: t.startedAt as number };
}

/** The `command.queued` event of a ticket that waits. */
function queued(c: Ctx, ticket: Ticket): CommandEvent {
  return { type: 'command.queued', agentId: c.agentId, topic: c.ref.topic, ticket, at: ticket.queuedAt };
}

/** The `command.finished` event of a ticket. */
function finished(c: Ctx, ticket: Ticket, result: ExecResult, at: number): CommandEvent {
  return { type: 'command.finished', agentId: c.agentId, topic: c.ref.topic, ticket, at, result, output: commandOutput(c.agentId, ticket, result) };
}

function refused(c: Ctx, ticket: Ticket, reason: RefusalReason, at: number): CommandEvent {
  return { type: 'command.refused', agentId: c.agentId, topic: c.ref.topic, ticket, at, reason, limits: c.limits };
}

/** A CONFLICT answer for tickets the agent's deletion ends (behaviour.md §1.3). */
function conflict(c: Ctx, session: SessionState, message: string): ExecResult {
  return { ...fail('CONFLICT', message), meta: sessionMeta(session), topic: c.ref.topic, topicType: c.ref.type };
}

/** The `runTicket` params of the ticket just started. */
const runningTicket = ({ context }: { context: Ctx }) => ({ ticket: context.running as Ticket, session: context.session });

export const topicQueueMachine = setup({
  types: {
    context: {} as TopicQueueContext,
    events: {} as TopicQueueEvent,
    input: {} as TopicInput,
    emitted: {} as CommandEvent | SessionEvent,
  },
  actors: { shell: shellMachine },
  actions: {
    /** The shell actor failed (a bug below): say so; it is stopped and the next /exec starts a new one. */
    reportShellError: (_args, _params: { error: unknown }) => {},
    /** Start the command of `ticket` in `session`; its result comes back as `command.done`. */
    runTicket: (_args, _params: { ticket: Ticket; session: SessionState }) => {},
    /** The arriving ticket becomes the running one, started at its arrival. */
    startTicket: assign(({ context, event }) => {
      const { ticket } = event as Extract<TopicQueueEvent, { type: 'command.arrive' | 'command.try' }>;
      return { issued: context.issued + 1, running: issue(context, ticket, ticket.queuedAt) };
    }),
    emitStarted: emit(({ context }: { context: Ctx }) => started(context)),
    /** End a session's resources: abort what runs in it, run its disposers. */
    disposeSession: (_args, _params: { session: SessionState }) => {},
    /** Replace the session (behaviour.md §1.3): later commands run on a fresh, empty one. */
    renewSession: enqueueTyped<{ at: number }>(({ enqueue, context, self }, p) => {
      // The shell is session state (behaviour.md §1.3): it ends with the session.
      if (hasShell(self)) enqueue.sendTo(SHELL_CHILD_ID, { type: 'shell.close' });
      enqueue({ type: 'disposeSession', params: { session: context.session } });
      enqueue.assign({ session: newSession(context.agentId, context.ref, p.at) });
    }),
    /** The agent is deleted: every ticket gets its answer now, then the topic ends. */
    answerAll: enqueueTyped<{ at: number }>(({ enqueue, context }, p) => {
      const s = context.session;
      if (context.running) {
        enqueue.emit(finished(context, context.running, conflict(context, s, `Topic ${context.ref.topic} was closed while this command ran`), p.at));
      }
      for (const t of context.waiting) {
        enqueue.cancel(expiryId(t.id));
        enqueue.emit(finished(context, t, conflict(context, s, `${context.owner} ${context.agentId} was deleted while this command waited`), p.at));
      }
      enqueue.assign({ running: null, waiting: [] });
      enqueue({ type: 'disposeSession', params: { session: s } });
    }),
  },
  guards: {
    queueHasRoom: ({ context }) => context.waiting.length < context.limits.max,
    /** The running ticket finished and another waits behind it. */
    isRunningWithWaiting: ({ context, event }) => ticketIdOf(event) !== undefined && context.running?.id === ticketIdOf(event) && context.waiting.length > 0,
    isWaiting: ({ context, event }) => { const id = ticketIdOf(event); return id !== undefined && context.waiting.some((t) => t.id === id); },
    isRunning: ({ context, event }) => ticketIdOf(event) !== undefined && context.running?.id === ticketIdOf(event),
    isThisSession: ({ context, event }) => event.type === 'session.change' && event.sessionId === context.session.id,
  },
}).createMachine({
  id: 'topicQueue',
  context: ({ input }) => initialTopicContext(input),
  initial: 'idle',
  on: {
    'agent.delete': { target: '.closed', actions: { type: 'answerAll', params: ({ event }) => ({ at: event.at }) } },
    'shell.open': {
      actions: enqueueActions(({ enqueue, event, context, self }) => {
        if (!hasShell(self)) enqueue.spawnChild('shell', { id: SHELL_CHILD_ID, systemId: shellSystemId(context.agentId, context.ref.topic), input: event.input });
      }),
    },
    'session.change': {
      guard: 'isThisSession',
      actions: [
        assign({ session: ({ context, event }) => applySessionChange(context.session, (event as Extract<TopicQueueEvent, { type: 'session.change' }>).change) }),
        emit(({ context, event }) => {
          const e = event as Extract<TopicQueueEvent, { type: 'session.change' }>;
          return { ...e.change, agentId: context.agentId, topic: context.ref.topic, sessionId: e.sessionId, at: e.at } as SessionEvent;
        }),
      ],
    },
    'xstate.done.actor.shell': { actions: stopChild(SHELL_CHILD_ID) },
    'xstate.error.actor.shell': { actions: [{ type: 'reportShellError', params: ({ event }) => ({ error: event.error }) }, stopChild(SHELL_CHILD_ID)] },
  },
  states: {
    idle: {
      on: {
        // The hot path of every command: plain actions (no enqueueActions), each resolved once.
        // An idle topic runs an MCP call (`command.try`) as it runs an /exec (`command.arrive`).
        'command.arrive': { target: 'executing', actions: ['startTicket', 'emitStarted', { type: 'runTicket', params: runningTicket }] },
        'command.try': { target: 'executing', actions: ['startTicket', 'emitStarted', { type: 'runTicket', params: runningTicket }] },
        'session.close': { target: 'closed', actions: { type: 'disposeSession', params: ({ context }) => ({ session: context.session }) } },
      },
    },
    executing: {
      on: {
        'command.arrive': [
          {
            guard: 'queueHasRoom',
            actions: [
              enqueueActions(({ enqueue, event, context }) => {
                const ticket = issue(context, event.ticket);
                enqueue.assign({ issued: context.issued + 1, waiting: [...context.waiting, ticket] });
                enqueue.raise({ type: 'command.expire', ticketId: ticket.id }, { id: expiryId(ticket.id), delay: context.limits.waitMs });
                enqueue.emit(queued(context, ticket));
              }),
            ],
          },
          { actions: [emit(({ context, event }) => refused(context, issue(context, event.ticket), 'QUEUE_FULL', event.ticket.queuedAt)), assign({ issued: ({ context }) => context.issued + 1 })] },
        ],
        'command.try': { actions: [emit(({ context, event }) => refused(context, issue(context, event.ticket), 'BUSY', event.ticket.queuedAt)), assign({ issued: ({ context }) => context.issued + 1 })] },
        'command.leave': {
          guard: 'isWaiting',
          actions: enqueueActions(({ enqueue, event, context }) => {
            enqueue.cancel(expiryId(event.ticketId));
            enqueue.assign({ waiting: context.waiting.filter((t) => t.id !== event.ticketId) });
          }),
        },
        'command.expire': {
          guard: 'isWaiting',
          actions: enqueueActions(({ enqueue, event, context }) => {
            const ticket = context.waiting.find((t) => t.id === event.ticketId) as Ticket;
            enqueue.assign({ waiting: context.waiting.filter((t) => t.id !== event.ticketId) });
            enqueue.emit(refused(context, ticket, 'QUEUE_TIMEOUT', ticket.queuedAt + context.limits.waitMs));
          }),
        },
        'command.done': [
          {
            // Answer the running ticket, then start the oldest waiting one (FIFO, spec §3) and cancel its expiry.
            guard: 'isRunningWithWaiting',
            actions: [
              emit(({ context, event }) => finished(context, context.running as Ticket, event.result, event.at)),
              cancel(({ context }) => expiryId(context.waiting[0].id)),
              assign(({ context, event }) => ({ running: withStart(context.waiting[0].id, context.waiting[0], event.at), waiting: context.waiting.slice(1) })),
              emit(({ context }) => started(context)),
              { type: 'runTicket', params: ({ context }) => ({ ticket: context.running as Ticket, session: context.session }) },
            ],
          },
          {
            guard: 'isRunning',
            target: 'idle',
            actions: [emit(({ context, event }) => finished(context, context.running as Ticket, event.result, event.at)), assign({ running: null })],
          },
        ],
        'session.close': { actions: { type: 'renewSession', params: ({ event }) => ({ at: event.at }) } },
      },
    },
    closed: { type: 'final' },
  },
});
