import { assign, enqueueActions, fromPromise, setup } from 'xstate';
import { keepAsGiven, registrationId, type PendingRegistration, type PersistOutput, type RegisterEvent, type RegisteredEvent } from './agentRegistration.js';
import { liveOnShelves } from './capabilityShelf.js';
import type { AgentProfile } from '../domain/ports.js';
import type { TopicRef } from '../domain/topic.js';
import type { CapabilityInput } from './capability.js';
import { capabilityShelfMachine, shelfChildId, SHELF_PREFIX } from './capabilityShelf.js';
import { installMachine, type InstallInput } from './install.js';
import { topicQueueMachine, type TopicInput } from './topicQueue.js';
import { webhookTokenMachine } from './webhookToken.js';
import { childFailure, childrenOf, endedChild, type ChildEndEvent } from './children.js';

/**
 * An agent (spec §2 Agent) and everything it owns, as one actor with children (architecture.md
 * "the actor tree"). The spec shows no agent table (§3: "Agent and session lifecycle beyond the rows
 * above: not shown"); Loom's is the smallest that matches §4.3:
 *
 * | State        | Trigger                   | Next         | Also                                                   |
 * | unregistered | POST /agents (first)      | registering  | the request waits in the agent's queue                  |
 * | registering  | stored                    | active       | answered `created: true`; queued registrations go next  |
 * | registering  | storing failed, none queued | discarded  | final: the id stays unknown                             |
 * | active       | POST /agents (again)      | active.persisting | the request waits its turn in the queue; then the profile (home, allowed paths) is updated |
 * | active       | DELETE /agents/{id}       | deleting     | every topic answers its tickets and ends; every live capability is revoked; counted here |
 * | deleting     | the cascade's I/O is done | deleted      | final: the remaining children (webhook token) stop with it |
 *
 * The agent actor is the only writer of its profile: each registration is an event it queues and
 * stores through its `persist` actor one at a time (machines/agentRegistration.ts), so concurrent
 * registrations of one id are answered in turn and exactly one of them creates the agent. A
 * DELETE that arrives while a registration is being stored waits for that one; registrations
 * still queued then get the agent's end as their answer, and their callers send them again.
 *
 * The context holds the agent's profile (what GET /agents lists; readers read it here, the
 * registry only persists it) and its open topics. A topic is open from POST /sessions or its
 * first command until its session is closed; its actor is spawned when a command needs it
 * (`topic.wake`), so an idle topic costs its record only. Children, with the system ids of
 * behaviour.md §13.3: `topic:<agent>/<topic>` (child id `topic:<topic>`), `cap:<token_id>` (on a
 * capability shelf, child id `caps:<c>`), `webhook:<agent>` (child id `webhook`),
 * `install:<install_id>` (child id the same; told to cancel when the agent is deleted). A child that
 * reaches a final state (a closed topic, a dead capability) is stopped and leaves the tree; a closed
 * topic leaves the open topics with it. The cascade's I/O (feature steps, state folder, registry
 * entry) is the provided promise actor `cascade`; its output is the response's counts.
 */

/** Counts of the DELETE /agents/{id} response (spec §4.3 rule 3). */
export type DeleteCounts = Record<string, number>;

export type { AgentProfile } from '../domain/ports.js';

/** An open topic: its reference and when its first session began. */
export interface OpenTopic {
  ref: TopicRef;
  createdAt: number;
}

export interface AgentContext {
  profile: AgentProfile;
  /** Open topics by canonical topic (a Map: topic names are user text). */
  topics: ReadonlyMap<string, OpenTopic>;
  /** The cascade's outcome (the machine's output): its counts, or the error it failed with. */
  outcome: AgentOutcome | null;
  /** True once a registration has been stored (false while the first one is being stored). */
  registered: boolean;
  /** Registrations taken and not yet answered, the one being stored first. */
  queue: readonly PendingRegistration[];
  /** How many registrations this actor has taken (the correlation id of the last one). */
  taken: number;
  /** When a DELETE that arrived during a registration's storing was asked (it runs next). */
  deferredDelete: number | null;
  /** The counts DELETE answers, counted from the children when the deletion starts (spec §4.3 rule 3). */
  counts: DeleteCounts;
}

/** What an agent actor starts from: a stored profile (a registered agent waking) or the id of a first registration. */
export interface AgentSpawnInput {
  profile: AgentProfile;
  registered: boolean;
}

/** What a deleted agent reports. */
export type AgentOutcome = { ok: true; counts: DeleteCounts } | { ok: false; error: unknown };

export type AgentEvent =
  | RegisterEvent
  /** POST /sessions: the topic is open (its actor waits for a command). */
  | { type: 'topic.open'; ref: TopicRef; at: number }
  /** A command needs the topic: it is open, and its actor runs (keeping the topic's creation time). */
  | { type: 'topic.wake'; ref: TopicRef; input: TopicInput }
  /** DELETE /sessions, a changed home: the topic's session ends (a busy topic goes on with a fresh one). */
  | { type: 'topic.close'; topic: string; at: number }
  | { type: 'cap.open'; input: CapabilityInput }
  | { type: 'webhook.open'; fingerprint: string | null; masked: string | null }
  | { type: 'install.open'; input: InstallInput }
  | { type: 'agent.delete'; at: number }
  // A child reached a final state or failed (XState's own events, matched by wildcard below).
  | ChildEndEvent;

/** Child ids (unique among one agent's children; never `cascade`, the invoked cascade). */
const TOPIC_CHILD_PREFIX = 'topic:';
export const topicChildId = (topic: string): string => `${TOPIC_CHILD_PREFIX}${topic}`;
export const WEBHOOK_CHILD_ID = 'webhook';
export const installChildId = (installId: string): string => `install:${installId}`;

/** System ids of behaviour.md §13.3. */
export const agentSystemId = (agentId: string): string => `agent:${agentId}`;
export const topicSystemId = (agentId: string, topic: string): string => `topic:${agentId}/${topic}`;
export { capSystemId } from './capabilityShelf.js';
export const webhookSystemId = (agentId: string): string => `webhook:${agentId}`;
export const installSystemId = (installId: string): string => `install:${installId}`;


/** The empty queue and counts every agent starts with (shared: updates copy; an agent costs its fields only). */
const NO_REGISTRATIONS: readonly PendingRegistration[] = Object.freeze([]);
const NO_COUNTS: DeleteCounts = Object.freeze({});

/** The empty topic set every agent starts with (never changed: updates copy). */
const NO_TOPICS: ReadonlyMap<string, OpenTopic> = new Map();


/** `topics` with `ref` open (created at `at`); the same map when it already is. */
function opened(topics: ReadonlyMap<string, OpenTopic>, ref: TopicRef, at: number): ReadonlyMap<string, OpenTopic> {
  return topics.has(ref.topic) ? topics : new Map(topics).set(ref.topic, { ref, createdAt: at });
}

/** A copy of `m` without `key`. */
function without<V>(m: ReadonlyMap<string, V>, key: string): ReadonlyMap<string, V> {
  if (!m.has(key)) return m;
  const out = new Map(m);
  out.delete(key);
  return out;
}


/** The sessions a topic close ends: a running topic's actor decides (it ends, or renews a busy session); an idle one just closes. */
type CloseEnqueue = { sendTo: (to: string, ev: { type: 'session.close'; at: number }) => void; assign: (a: Partial<AgentContext>) => void };
function closeTopic(enqueue: CloseEnqueue, children: Record<string, unknown>, topics: ReadonlyMap<string, OpenTopic>, topic: string, at: number): ReadonlyMap<string, OpenTopic> {
  const id = topicChildId(topic);
  if (Object.hasOwn(children, id)) {
    enqueue.sendTo(id, { type: 'session.close', at });
    return topics;
  }
  return without(topics, topic);
}

export const agentMachine = setup({
  types: {
    context: {} as AgentContext,
    events: {} as AgentEvent,
    input: {} as AgentSpawnInput,
    output: {} as AgentOutcome,
    emitted: {} as RegisteredEvent,
  },
  actors: {
    topic: topicQueueMachine,
    capabilityShelf: capabilityShelfMachine,
    webhookToken: webhookTokenMachine,
    install: installMachine,
    /** Store one registration (provided by src/actors: home folder, real paths, registry). */
    persist: keepAsGiven,
    /** The I/O of DELETE /agents/{id} after the children have been told (provided by src/actors). */
    cascade: fromPromise<DeleteCounts, { agentId: string; counts: DeleteCounts }>(async ({ input }) => input.counts),
  },
  guards: {
    registered: ({ context }) => context.registered,
    queued: ({ context }) => context.queue.length > 0,
    morePending: ({ context }) => context.queue.length > 1,
    deleteAsked: ({ context }) => context.deferredDelete !== null,
  },
  actions: {
    /** A child failed (a bug below): say so; the child is stopped so the agent keeps working. */
    reportChildError: (_args, _params: { childId: string; error: unknown }) => {},
    /** The head of the queue was stored: the profile is the stored one, and its caller is answered. */
    answerStored: enqueueActions(({ enqueue, context, event, self }) => {
      const out = (event as unknown as { output: PersistOutput }).output;
      const head = context.queue[0] as PendingRegistration;
      let topics = context.topics;
      // behaviour.md §9.5: a changed home or confinement ends the agent's sessions.
      if (out.closeTopics) for (const topic of [...topics.keys()]) topics = closeTopic(enqueue, childrenOf(self), topics, topic, out.at);
      enqueue.assign({ profile: out.profile, registered: true, queue: context.queue.length === 1 ? NO_REGISTRATIONS : context.queue.slice(1), topics });
      enqueue.emit({ type: 'agent.registered', id: head.id, ok: true, profile: out.profile, created: !context.registered });
    }),
    /** Storing the head of the queue failed: its caller gets the error; the profile is unchanged. */
    answerFailed: enqueueActions(({ enqueue, context, event }) => {
      const head = context.queue[0] as PendingRegistration;
      enqueue.assign({ queue: context.queue.length === 1 ? NO_REGISTRATIONS : context.queue.slice(1) });
      enqueue.emit({ type: 'agent.registered', id: head.id, ok: false, error: (event as unknown as { error: unknown }).error });
    }),
    /** The deletion starts: count what it ends, and tell the children (spec §4.3 rule 3). */
    startDeletion: enqueueActions(({ enqueue, context, self }, params: { at: number }) => {
      const children = childrenOf(self);
      enqueue.assign({ counts: { revoked_capabilities: liveOnShelves(children), disposed_sessions: context.topics.size }, deferredDelete: null });
      // The cascade is the tree: each topic answers its tickets and ends, each live capability is
      // revoked, each running install is cancelled (nothing is committed into a deleted agent).
      for (const [id, child] of Object.entries(children)) {
        if (id.startsWith(TOPIC_CHILD_PREFIX) || id.startsWith(SHELF_PREFIX)) enqueue.sendTo(child, { type: 'agent.delete', at: params.at });
        if (id.startsWith('install:')) enqueue.sendTo(child, { type: 'install.cancel', code: 'CONFLICT', message: `Agent ${context.profile.id} was deleted while this install ran` });
      }
    }),
  },
}).createMachine({
  id: 'agent',
  context: ({ input }) => ({
    profile: input.profile, registered: input.registered, topics: NO_TOPICS, outcome: null, queue: NO_REGISTRATIONS, taken: 0, deferredDelete: null, counts: NO_COUNTS,
  }),
  initial: 'boot',
  on: {
    // Every registration is taken in every state and answered in its turn (or by the agent's end).
    'agent.register': {
      actions: assign(({ context, event }) => ({ taken: context.taken + 1, queue: [...context.queue, { id: registrationId(context.taken + 1), fields: event.fields }] })),
    },
    // A closed topic or a dead capability leaves the tree; a closed topic is no longer open.
    'xstate.done.actor.*': {
      actions: enqueueActions(({ enqueue, event, context }) => {
        const child = endedChild(event.type);
        enqueue.stopChild(child);
        if (child.startsWith(TOPIC_CHILD_PREFIX)) enqueue.assign({ topics: without(context.topics, child.slice(TOPIC_CHILD_PREFIX.length)) });
      }),
    },
    'xstate.error.actor.*': {
      actions: enqueueActions(({ enqueue, event }) => {
        enqueue({ type: 'reportChildError', params: childFailure(event) });
        enqueue.stopChild(endedChild(event.type));
      }),
    },
  },
  states: {
    boot: { always: [{ guard: 'registered', target: 'active' }, { target: 'unregistered' }] },
    unregistered: { always: { guard: 'queued', target: 'registering' } },
    registering: {
      invoke: {
        src: 'persist',
        input: ({ context }) => ({ existing: null, fields: (context.queue[0] as PendingRegistration).fields }),
        onDone: { target: 'active', actions: 'answerStored' },
        onError: [
          { guard: 'morePending', target: 'registering', reenter: true, actions: 'answerFailed' },
          { target: 'discarded', actions: 'answerFailed' },
        ],
      },
    },
    discarded: { type: 'final' },
    active: {
      initial: 'ready',
      on: {
        // Each open and wake is idempotent: a topic that is open stays as it is.
        'topic.open': {
          actions: assign({ topics: ({ context, event }) => opened(context.topics, event.ref, event.at) }),
        },
        'topic.wake': {
          actions: enqueueActions(({ enqueue, event, context, self }) => {
            const t = event.ref.topic;
            const id = topicChildId(t);
            const topics = opened(context.topics, event.ref, event.input.now);
            if (topics !== context.topics) enqueue.assign({ topics });
            if (Object.hasOwn(childrenOf(self), id)) return;
            const createdAt = (topics.get(t) as OpenTopic).createdAt;
            enqueue.spawnChild('topic', { id, systemId: topicSystemId(context.profile.id, t), input: { ...event.input, now: createdAt } });
          }),
        },
        'topic.close': {
          actions: enqueueActions(({ enqueue, event, context, self }) => {
            const topics = closeTopic(enqueue, childrenOf(self), context.topics, event.topic, event.at);
            if (topics !== context.topics) enqueue.assign({ topics });
          }),
        },
        'cap.open': {
          actions: enqueueActions(({ enqueue, event, self }) => {
            const shelf = shelfChildId(event.input.tokenId);
            if (!Object.hasOwn(childrenOf(self), shelf)) enqueue.spawnChild('capabilityShelf', { id: shelf });
            enqueue.sendTo(shelf, event);
          }),
        },
        'webhook.open': {
          actions: enqueueActions(({ enqueue, event, context, self }) => {
            if (!(WEBHOOK_CHILD_ID in childrenOf(self))) {
              enqueue.spawnChild('webhookToken', { id: WEBHOOK_CHILD_ID, systemId: webhookSystemId(context.profile.id), input: { agentId: context.profile.id, fingerprint: event.fingerprint, masked: event.masked } });
            }
          }),
        },
        'install.open': {
          actions: enqueueActions(({ enqueue, event, self }) => {
            const id = installChildId(event.input.installId);
            if (!Object.hasOwn(childrenOf(self), id)) enqueue.spawnChild('install', { id, systemId: installSystemId(event.input.installId), input: event.input });
          }),
        },
      },
      states: {
        ready: {
          always: [
            { guard: 'deleteAsked', target: '#agent.deleting', actions: { type: 'startDeletion', params: ({ context }) => ({ at: context.deferredDelete as number }) } },
            { guard: 'queued', target: 'persisting' },
          ],
          on: {
            'agent.delete': { target: '#agent.deleting', actions: { type: 'startDeletion', params: ({ event }) => ({ at: event.at }) } },
          },
        },
        persisting: {
          invoke: {
            src: 'persist',
            input: ({ context }) => ({ existing: context.profile, fields: (context.queue[0] as PendingRegistration).fields }),
            onDone: { target: 'ready', actions: 'answerStored' },
            onError: { target: 'ready', actions: 'answerFailed' },
          },
          on: { 'agent.delete': { actions: assign({ deferredDelete: ({ event }) => event.at }) } },
        },
      },
    },
    deleting: {
      invoke: {
        id: 'cascade',
        src: 'cascade',
        input: ({ context }) => ({ agentId: context.profile.id, counts: context.counts }),
        onDone: { target: 'deleted', actions: assign({ outcome: ({ event }) => ({ ok: true as const, counts: event.output }) }) },
        // The children are gone either way; the caller answers the error (500).
        onError: { target: 'deleted', actions: assign({ outcome: ({ event }) => ({ ok: false as const, error: event.error }) }) },
      },
    },
    deleted: { type: 'final' },
  },
  output: ({ context }) => context.outcome ?? { ok: true, counts: {} },
});
