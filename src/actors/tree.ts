import { createActor, fromPromise, type Actor, type ActorRefFrom } from 'xstate';
import { errorMessage } from '../domain/errors.js';
import type { Clock } from '../domain/ports.js';
import type { SessionState } from '../domain/session.js';
import type { ExecResult, Ticket } from '../domain/ticket.js';
import { agentMachine, type DeleteCounts } from '../machines/agent.js';
import { capabilityLogic } from '../machines/capability.js';
import { daemonMachine } from '../machines/daemon.js';
import { shellMachine } from '../machines/shell.js';
import { topicQueueMachine } from '../machines/topicQueue.js';
import type { webhookTokenMachine } from '../machines/webhookToken.js';
import { shellProcessLogic } from './shellProcess.js';

/** The actor of one topic (spec §3 queue plus its session). */
export type TopicRef = ActorRefFrom<typeof topicQueueMachine>;
/** The actor of one agent. */
export type AgentRef = ActorRefFrom<typeof agentMachine>;
/** The actor of one live capability. */
export type CapabilityRef = ActorRefFrom<ReturnType<typeof capabilityLogic>>;
/** The persistent shell of one bash topic. */
export type ShellRef = ActorRefFrom<typeof shellMachine>;
/** The webhook-token actor of one agent. */
export type WebhookRef = ActorRefFrom<typeof webhookTokenMachine>;
/** The root of the tree. */
export type DaemonActor = Actor<typeof daemonMachine>;

/** The effects the machines of the tree name, provided here (machine.provide). */
export interface TreeEffects {
  clock: Clock;
  /** Run one ticket's command in a session; never rejects. */
  run(session: SessionState, ticket: Ticket): Promise<ExecResult>;
  /** End a session's resources (abort what runs in it, disposers). */
  dispose(session: SessionState): void | Promise<void>;
  /** The I/O of DELETE /agents/{id}; resolves with the counts to answer. */
  cascade(agentId: string, counts: DeleteCounts): Promise<DeleteCounts>;
}

/** A failure below that no caller will see: say it, never crash the daemon for it. */
export function warn(what: string, err: unknown): void {
  process.emitWarning(`${what}: ${errorMessage(err)}`);
}

/**
 * Create (not start) the daemon's actor tree (architecture.md "the actor tree"): the root machine
 * with the agent machine, and through it the topic, capability and webhook-token machines, all
 * provided with their effects. One actor system, one clock: every delayed event (queue expiry,
 * capability TTL) is scheduled on `effects.clock`.
 */
export function createTree(effects: TreeEffects): DaemonActor {
  const { clock } = effects;
  const shell = shellMachine.provide({ actors: { process: shellProcessLogic } });
  const topic = topicQueueMachine.provide({
    actors: { shell },
    actions: {
      runTicket: ({ self }, { ticket, session }) => {
        // Started after the current transition has been committed, so the command sees its topic executing.
        void Promise.resolve()
          .then(() => effects.run(session, ticket))
          .catch((err: unknown): ExecResult => ({
            ok: false, code: 'INTERNAL_ERROR', body: `ERROR(INTERNAL_ERROR): Internal error: ${errorMessage(err)}`,
            meta: null, topic: session.ref.topic, topicType: session.ref.type,
          }))
          .then((result) => self.send({ type: 'command.done', ticketId: ticket.id, result, at: clock.now() }));
      },
      disposeSession: (_args, { session }) => {
        void Promise.resolve().then(() => effects.dispose(session)).catch((err: unknown) => warn(`closing session ${session.ref.topic}`, err));
      },
      reportShellError: ({ context }, { error }) => warn(`shell of ${context.agentId}/${context.ref.topic} failed`, error),
    },
  });
  const reportChildError = (_args: unknown, p: { childId: string; error: unknown }) => warn(`actor ${p.childId} failed`, p.error);
  const agent = agentMachine.provide({
    actors: {
      topic,
      capability: capabilityLogic(clock),
      cascade: fromPromise<DeleteCounts, { agentId: string; counts: DeleteCounts }>(({ input }) => effects.cascade(input.agentId, input.counts)),
    },
    actions: { reportChildError },
  });
  const root = daemonMachine.provide({ actors: { agent }, actions: { reportChildError } });
  return createActor(root, { clock, systemId: 'daemon' } as never) as DaemonActor;
}
