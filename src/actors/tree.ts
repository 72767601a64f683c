import { createActor, fromCallback, fromPromise, type Actor, type ActorRefFrom } from 'xstate';
import { errorMessage } from '../domain/errors.js';
import { failureOf, type InstallOutcome } from '../domain/install.js';
import type { Clock } from '../domain/ports.js';
import type { SessionState } from '../domain/session.js';
import type { ExecResult, Ticket } from '../domain/ticket.js';
import { agentMachine, type DeleteCounts } from '../machines/agent.js';
import { capabilityLogic } from '../machines/capability.js';
import { agentShelfMachine } from '../machines/agentShelf.js';
import { capabilityShelfMachine } from '../machines/capabilityShelf.js';
import { daemonMachine } from '../machines/daemon.js';
import { installMachine, type InstallEvent, type InstallInput, type ProgressUpdate } from '../machines/install.js';
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
/** The actor of one running install. */
export type InstallRef = ActorRefFrom<typeof installMachine>;
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
  /** The install machine's `stage` work and `wipeStaging` action (the install feature's). */
  install: InstallEffects;
}

/** What runs in an install actor's `staging` state (spec §3 Package install). */
export interface InstallEffects {
  /** Validate, write the staging folder, commit; reports progress; rejects with an install error. */
  run(input: InstallInput, report: (u: ProgressUpdate) => void, signal: AbortSignal): Promise<Extract<InstallOutcome, { ok: true }>>;
  /** Remove the staging folder of an aborted install once its work has settled. */
  wipe(installId: string, dir: string | null): void;
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
  const install = installMachine.provide({
    actors: {
      stage: fromCallback<InstallEvent, InstallInput>(({ input, sendBack }) => {
        const stop = new AbortController();
        effects.install.run(input, (u) => sendBack({ type: 'install.progress', ...u }), stop.signal).then(
          (outcome) => sendBack({ type: 'install.written', outcome }),
          (err: unknown) => sendBack({ type: 'install.failed', ...failureOf(err) }),
        );
        // Leaving `staging` (cancelled, or the tree stops) ends the work in flight.
        return () => stop.abort();
      }),
    },
    actions: { wipeStaging: (_args, p) => effects.install.wipe(p.installId, p.dir) },
  });
  const reportChildError = (_args: unknown, p: { childId: string; error: unknown }) => warn(`actor ${p.childId} failed`, p.error);
  const capabilityShelf = capabilityShelfMachine.provide({ actors: { capability: capabilityLogic(clock) }, actions: { reportChildError } });
  const agent = agentMachine.provide({
    actors: {
      topic,
      install,
      capabilityShelf,
      cascade: fromPromise<DeleteCounts, { agentId: string; counts: DeleteCounts }>(({ input }) => effects.cascade(input.agentId, input.counts)),
    },
    actions: { reportChildError },
  });
  const agentShelf = agentShelfMachine.provide({ actors: { agent }, actions: { reportChildError } });
  const root = daemonMachine.provide({ actors: { agentShelf }, actions: { reportChildError } });
  return createActor(root, { clock, systemId: 'daemon' } as never) as DaemonActor;
}
