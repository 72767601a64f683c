import { createActor, fromCallback, fromPromise, type Actor, type ActorRefFrom } from 'xstate';
import { errorMessage } from '../domain/errors.js';
import { failureOf, installError } from '../domain/install.js';
import type { Clock } from '../domain/ports.js';
import type { SessionState } from '../domain/session.js';
import type { Ticket, TicketOutcome } from '../domain/ticket.js';
import { agentMachine, type DeleteCounts } from '../machines/agent.js';
import { capabilityLogic, type CapabilityContext } from '../machines/capability.js';
import { agentShelfMachine } from '../machines/agentShelf.js';
import { capabilityShelfMachine } from '../machines/capabilityShelf.js';
import { daemonMachine } from '../machines/daemon.js';
import { installMachine, type InstallStageLogic } from '../machines/install.js';
import { shellMachine } from '../machines/shell.js';
import { topicQueueMachine } from '../machines/topicQueue.js';
import { webhookTokenMachine, type WebhookSaveLogic } from '../machines/webhookToken.js';
import type { PersistInput, PersistOutput } from '../machines/agentRegistration.js';
import { shellProcessLogic } from './shellProcess.js';

/** The actor of one topic (spec §3 queue plus its session). */
export type TopicActor = ActorRefFrom<typeof topicQueueMachine>;
/** The actor of one agent. */
export type AgentActor = ActorRefFrom<typeof agentMachine>;
/** The actor of one live capability. */
export type CapabilityActor = ActorRefFrom<ReturnType<typeof capabilityLogic>>;
/** The persistent shell of one bash topic. */
export type ShellActor = ActorRefFrom<typeof shellMachine>;
/** The webhook-token actor of one agent. */
export type WebhookActor = ActorRefFrom<typeof webhookTokenMachine>;
/** The actor of one running install. */
export type InstallActor = ActorRefFrom<typeof installMachine>;
/** The root of the tree. */
export type DaemonActor = Actor<typeof daemonMachine>;

/** The effects the machines of the tree name, provided here (machine.provide). */
export interface TreeEffects {
  clock: Clock;
  /** Run one ticket's command in a session; never rejects. */
  run(session: SessionState, ticket: Ticket): Promise<TicketOutcome>;
  /** End a session's resources (abort what runs in it). */
  dispose(session: SessionState): void;
  /** The I/O of DELETE /agents/{id}; resolves with the counts to answer. */
  cascade(agentId: string, counts: DeleteCounts): Promise<DeleteCounts>;
  /** The I/O of one registration (POST /agents): folder, real paths, registry; resolves with the stored profile. */
  persist(input: PersistInput): Promise<PersistOutput>;
  /** What the features provide to their machines (architecture.md "features plug into the tree"). */
  features: FeatureActors;
}

/**
 * The logic and actions features give the machines of their actors, at construction: the install
 * feature the work of `staging`, the capabilities feature what a capability's end writes, the
 * events feature how a webhook token is stored. A machine whose feature is absent keeps its default.
 */
export interface FeatureActors {
  /** The install machine's `stage` actor (spec §3 Package install). */
  installStage?: InstallStageLogic;
  /** The capability machine's `archive` action: a final state was reached (spec §3 Capability). */
  archiveCapability?: (snapshot: { value: string; context: CapabilityContext }) => void;
  /** The webhook-token machine's `save` actor (spec §3 Webhook token). */
  webhook?: { save: WebhookSaveLogic };
}

/** A failure below that no caller will see: say it, never crash the daemon for it. */
export function warn(what: string, err: unknown): void {
  process.emitWarning(`${what}: ${errorMessage(err)}`);
}

/** Without the install feature, every install fails at once. */
const noInstalls: InstallStageLogic = fromCallback(({ sendBack }) => {
  sendBack({ type: 'install.failed', ...failureOf(installError('Installs are not available in this build', 'COMMAND_UNSUPPORTED')) });
});

/**
 * Create (not start) the daemon's actor tree (architecture.md "the actor tree"): the root machine
 * with the agent machine, and through it the topic, capability, webhook-token and install
 * machines, all provided with their effects. One actor system, one clock: every delayed event
 * (queue expiry, capability TTL) is scheduled on `effects.clock`.
 */
export function createTree(effects: TreeEffects): DaemonActor {
  const { clock, features } = effects;
  const shell = shellMachine.provide({ actors: { process: shellProcessLogic } });
  const topic = topicQueueMachine.provide({
    actors: { shell },
    actions: {
      runTicket: ({ self }, { ticket, session }) => {
        const answer = ({ result, sessionId, changes }: TicketOutcome): void => {
          // What the command changed reaches its topic as events, before its answer (architecture.md "One read model").
          const at = clock.now();
          for (const change of changes) self.send({ type: 'session.change', sessionId, change, at });
          self.send({ type: 'command.done', ticketId: ticket.id, result, at });
        };
        const failed = (err: unknown): void => answer({
          result: {
            ok: false, code: 'INTERNAL_ERROR', body: `ERROR(INTERNAL_ERROR): Internal error: ${errorMessage(err)}`,
            meta: null, topic: session.ref.topic, topicType: session.ref.type,
          },
          sessionId: session.id, changes: [],
        });
        // Started after the current transition has been committed, so the command sees its topic executing.
        // One reaction for both outcomes: no promise hop between the result and its answer.
        void Promise.resolve().then(() => effects.run(session, ticket)).then(answer, failed);
      },
      disposeSession: (_args, { session }) => {
        try {
          effects.dispose(session);
        } catch (err) {
          warn(`closing session ${session.ref.topic}`, err);
        }
      },
      reportShellError: ({ context }, { error }) => warn(`shell of ${context.agentId}/${context.ref.topic} failed`, error),
    },
  });
  const install = installMachine.provide({ actors: { stage: features.installStage ?? noInstalls } });
  const reportChildError = (_args: unknown, p: { childId: string; error: unknown }) => warn(`actor ${p.childId} failed`, p.error);
  const archive = features.archiveCapability;
  const capability = capabilityLogic(clock).provide({ actions: { archive: ({ context }, { state }) => archive?.({ value: state, context }) } });
  const capabilityShelf = capabilityShelfMachine.provide({ actors: { child: capability }, actions: { reportChildError } });
  const hooks = features.webhook;
  const webhookToken = hooks
    ? webhookTokenMachine.provide({ actors: { save: hooks.save } })
    : webhookTokenMachine;
  const agent = agentMachine.provide({
    actors: {
      topic,
      install,
      capabilityShelf,
      webhookToken,
      cascade: fromPromise<DeleteCounts, { agentId: string; counts: DeleteCounts }>(({ input }) => effects.cascade(input.agentId, input.counts)),
      persist: fromPromise<PersistOutput, PersistInput>(({ input }) => effects.persist(input)),
    },
    actions: { reportChildError },
  });
  const agentShelf = agentShelfMachine.provide({ actors: { child: agent }, actions: { reportChildError } });
  const root = daemonMachine.provide({ actors: { child: agentShelf }, actions: { reportChildError } });
  return createActor(root, { clock, systemId: 'daemon' } as never) as DaemonActor;
}

/**
 * The daemon's actor tree as the rest of the runtime holds it: built in two steps, because the
 * features that provide parts of its machines are built first (they get this holder, not the
 * root). `root` is the running root once `start` has run.
 */
export class ActorTree {
  private current: DaemonActor | undefined;

  /** The running root; throws before `start` (a start-up ordering bug). */
  get root(): DaemonActor {
    if (!this.current) throw new Error('the actor tree has not started');
    return this.current;
  }

  /** Create and start the tree (once). */
  start(effects: TreeEffects): void {
    if (this.current) return;
    this.current = createTree(effects);
    this.current.start();
  }
}
