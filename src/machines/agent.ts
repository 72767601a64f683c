import { assign, enqueueActions, fromPromise, setup, stopChild, type AnyActorRef } from 'xstate';
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
 * | State    | Trigger                  | Next     | Also                                                        |
 * | active   | POST /agents (again)     | active   | home updated                                                |
 * | active   | DELETE /agents/{id}      | deleting | every topic answers its tickets and ends; every live capability is revoked |
 * | deleting | the cascade's I/O is done| deleted  | final: the remaining children (webhook token) stop with it |
 *
 * Children, with the system ids of behaviour.md §13.3: `topic:<agent>/<topic>` (child id
 * `topic:<topic>`), `cap:<token_id>` (on a capability shelf, child id `caps:<c>`: machines/capabilityShelf.ts
 * says why), `webhook:<agent>` (child id
 * `webhook`), `install:<install_id>` (child id the same; one per running install, told to cancel
 * when the agent is deleted). A child that reaches a final state (a closed topic, a dead capability) is stopped
 * and leaves the tree. The cascade's I/O (feature steps, state folder, registry entry) is the
 * provided promise actor `cascade`; its output is the response's counts.
 *
 * A topic opened by POST /sessions is **dormant** until its first command: a record in the agent's
 * context (its name and creation time), not an actor, so a thousand agents with five idle topics
 * each cost little more than their records. `topic.wake` turns it into its actor.
 */

/** Counts of the DELETE /agents/{id} response (spec §4.3 rule 3). */
export type DeleteCounts = Record<string, number>;

/** A topic that has not run a command yet: its record only. */
export interface DormantTopic {
  ref: TopicRef;
  createdAt: number;
}

export interface AgentContext {
  id: string;
  home: string;
  /** Dormant topics by canonical topic (a Map: topic names are user text). */
  dormant: ReadonlyMap<string, DormantTopic>;
  /** The cascade's outcome (the machine's output): its counts, or the error it failed with. */
  outcome: AgentOutcome | null;
}

/** What a deleted agent reports. */
export type AgentOutcome = { ok: true; counts: DeleteCounts } | { ok: false; error: unknown };

export type AgentEvent =
  | { type: 'agent.update'; home: string }
  /** POST /sessions: a dormant topic, unless the topic already exists. */
  | { type: 'topic.open'; ref: TopicRef; at: number }
  /** A command needs the topic: its actor, spawned from the dormant record (keeping its creation time) or new. */
  | { type: 'topic.wake'; ref: TopicRef; input: TopicInput }
  /** A dormant topic's session was closed: the topic ends. */
  | { type: 'topic.forget'; topic: string }
  | { type: 'cap.open'; input: CapabilityInput }
  | { type: 'webhook.open'; fingerprint: string | null }
  | { type: 'install.open'; input: InstallInput }
  | { type: 'agent.delete'; at: number; counts: DeleteCounts }
  // A child reached a final state or failed (XState's own events, matched by wildcard below).
  | ChildEndEvent;

/** Child ids (unique among one agent's children; never `cascade`, the invoked cascade). */
export const topicChildId = (topic: string): string => `topic:${topic}`;
export const WEBHOOK_CHILD_ID = 'webhook';
export const installChildId = (installId: string): string => `install:${installId}`;

/** System ids of behaviour.md §13.3. */
export const agentSystemId = (agentId: string): string => `agent:${agentId}`;
export const topicSystemId = (agentId: string, topic: string): string => `topic:${agentId}/${topic}`;
export { capSystemId } from './capabilityShelf.js';
export const webhookSystemId = (agentId: string): string => `webhook:${agentId}`;
export const installSystemId = (installId: string): string => `install:${installId}`;


/** The empty dormant set every agent starts with (never changed: updates copy). */
const NO_TOPICS: ReadonlyMap<string, DormantTopic> = new Map();

/** A copy of `m` without `key`. */
function without<V>(m: ReadonlyMap<string, V>, key: string): ReadonlyMap<string, V> {
  if (!m.has(key)) return m;
  const out = new Map(m);
  out.delete(key);
  return out;
}


export const agentMachine = setup({
  types: {
    context: {} as AgentContext,
    events: {} as AgentEvent,
    input: {} as { id: string; home: string },
    output: {} as AgentOutcome,
  },
  actors: {
    topic: topicQueueMachine,
    capabilityShelf: capabilityShelfMachine,
    webhookToken: webhookTokenMachine,
    install: installMachine,
    /** The I/O of DELETE /agents/{id} after the children have been told (provided by src/actors). */
    cascade: fromPromise<DeleteCounts, { agentId: string; counts: DeleteCounts }>(async ({ input }) => input.counts),
  },
  actions: {
    /** A child failed (a bug below): say so; the child is stopped so the agent keeps working. */
    reportChildError: (_args, _params: { childId: string; error: unknown }) => {},
  },
}).createMachine({
  id: 'agent',
  context: ({ input }) => ({ id: input.id, home: input.home, dormant: NO_TOPICS, outcome: null }),
  initial: 'active',
  on: {
    // A closed topic or a dead capability leaves the tree.
    'xstate.done.actor.*': { actions: stopChild(({ event }) => endedChild(event.type)) },
    'xstate.error.actor.*': {
      actions: enqueueActions(({ enqueue, event }) => {
        enqueue({ type: 'reportChildError', params: childFailure(event) });
        enqueue.stopChild(endedChild(event.type));
      }),
    },
  },
  states: {
    active: {
      on: {
        'agent.update': { actions: assign({ home: ({ event }) => event.home }) },
        // Each open and spawn is idempotent: a topic that already exists is kept as it is.
        'topic.open': {
          actions: enqueueActions(({ enqueue, event, context, self }) => {
            const t = event.ref.topic;
            if (Object.hasOwn(childrenOf(self), topicChildId(t)) || context.dormant.has(t)) return;
            enqueue.assign({ dormant: new Map(context.dormant).set(t, { ref: event.ref, createdAt: event.at }) });
          }),
        },
        'topic.wake': {
          actions: enqueueActions(({ enqueue, event, context, self }) => {
            const t = event.ref.topic;
            const id = topicChildId(t);
            if (Object.hasOwn(childrenOf(self), id)) return;
            const record = context.dormant.get(t);
            if (record) enqueue.assign({ dormant: without(context.dormant, t) });
            enqueue.spawnChild('topic', { id, systemId: topicSystemId(context.id, t), input: { ...event.input, now: record?.createdAt ?? event.input.now } });
          }),
        },
        'topic.forget': { actions: assign({ dormant: ({ context, event }) => without(context.dormant, event.topic) }) },
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
              enqueue.spawnChild('webhookToken', { id: WEBHOOK_CHILD_ID, systemId: webhookSystemId(context.id), input: { fingerprint: event.fingerprint } });
            }
          }),
        },
        'install.open': {
          actions: enqueueActions(({ enqueue, event, self }) => {
            const id = installChildId(event.input.installId);
            if (!Object.hasOwn(childrenOf(self), id)) enqueue.spawnChild('install', { id, systemId: installSystemId(event.input.installId), input: event.input });
          }),
        },
        'agent.delete': {
          target: 'deleting',
          // The cascade is the tree: each topic answers its tickets and ends, each live capability is
          // revoked, each running install is cancelled (nothing is committed into a deleted agent).
          actions: enqueueActions(({ enqueue, event, context, self }) => {
            for (const [id, child] of Object.entries(childrenOf(self))) {
              if (id.startsWith('topic:') || id.startsWith(SHELF_PREFIX)) enqueue.sendTo(child, { type: 'agent.delete', at: event.at });
              if (id.startsWith('install:')) enqueue.sendTo(child, { type: 'install.cancel', code: 'CONFLICT', message: `Agent ${context.id} was deleted while this install ran` });
            }
          }),
        },
      },
    },
    deleting: {
      invoke: {
        id: 'cascade',
        src: 'cascade',
        input: ({ context, event }) => ({ agentId: context.id, counts: (event as Extract<AgentEvent, { type: 'agent.delete' }>).counts }),
        onDone: { target: 'deleted', actions: assign({ outcome: ({ event }) => ({ ok: true as const, counts: event.output }) }) },
        // The children are gone either way; the caller answers the error (500).
        onError: { target: 'deleted', actions: assign({ outcome: ({ event }) => ({ ok: false as const, error: event.error }) }) },
      },
    },
    deleted: { type: 'final' },
  },
  output: ({ context }) => context.outcome ?? { ok: true, counts: {} },
});
