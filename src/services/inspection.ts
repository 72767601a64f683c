import type { SessionEvent } from '../domain/session.js';
import type { AnyActorRef, AnyStateMachine, InspectionEvent } from 'xstate';
import type { DaemonInfo } from '../domain/commandCaller.js';
import { errorMessage } from '../domain/errors.js';
import type { Clock, EnvStore } from '../domain/ports.js';
import type { AgentDirectory } from '../actors/directory.js';
import { inspectionSnapshot, type InspectionSnapshot } from './inspectionSnapshot.js';
import { CORE_MACHINES, machineCatalogue, type MachineView } from './machineCatalogue.js';
import type { ValueMasks } from '../domain/redact.js';
import type { SessionState } from '../domain/session.js';
import type { CommandEvent } from '../domain/ticket.js';
import { topicSystemId } from '../machines/agent.js';
import { CommandSecrets } from './commandSecrets.js';
import type { ActorTree, DaemonActor } from '../actors/tree.js';
import { describeActor, type LiveActor, type LiveMessage } from './inspectionMessages.js';
import { InspectionSerialiser, sessionJson, type HistorySessionChange } from './inspectionSerialiser.js';
import { RecentCommands } from './recentCommands.js';
import { observeSnapshots, type SnapshotEvent } from '../adapters/xstateSnapshots.js';
import { TopicHistories } from './topicHistory.js';

export type { CommandFacts, InspectorMessage, LiveActor, LiveMessage } from './inspectionMessages.js';
export type { HistorySessionChange } from './inspectionSerialiser.js';

/** A webhook post the inbox took (what a trace records as a `webhook` step, behaviour.md §14.2). */
export interface IntakeEvent {
  agentId: string;
  text: string;
  /** ms since the epoch. */
  at: number;
}

/** What the inspection reads besides the tree: the directory, the daemon's facts, the features' parts. */
export interface InspectionSources {
  directory: AgentDirectory;
  info: DaemonInfo;
  clock: Clock;
  /** Agent-level fields the features add (event counts, capabilities, webhook), already public. */
  extras(agentId: string): Record<string, unknown>;
  /** Machines of the features' actors (install, shell). */
  machines: AnyStateMachine[];
}

/** A raw observer of the whole tree (XState inspection events). */
export type InspectionObserver = (event: InspectionEvent) => void;

/**
 * Inspection of the actor tree (architecture.md, behaviour.md §13): root-level inspection of every
 * actor, the registry of live actors for an initial snapshot, and the one redacting serialiser
 * that turns both, and the topics' `command.*` events, into the plain messages of §13.3. Nothing
 * is serialised while nobody watches.
 */
export class Inspection {
  private readonly commandObservers = new Set<(ev: CommandEvent) => void>();
  private readonly intakeObservers = new Set<(ev: IntakeEvent) => void>();
  private readonly sessionObservers = new Set<(ev: SessionEvent) => void>();
  private readonly historyObservers = new Set<(ev: HistorySessionChange) => void>();
  /** The last commands of every topic (behaviour.md §13.2 `recent`), kept even while nobody watches. */
  readonly recent = new RecentCommands();
  /** The last changes of every topic (behaviour.md §13.7 `history`), kept even while nobody watches. */
  readonly history = new TopicHistories();
  /** The values a shown `cmd` must not hold (behaviour.md §13.4): env-store values, session variables. */
  readonly secrets: CommandSecrets;

  constructor(private readonly tree: ActorTree, env: Pick<EnvStore, 'values' | 'revision'>) {
    this.secrets = new CommandSecrets(env);
  }

  private get root(): DaemonActor {
    return this.tree.root;
  }

  /**
   * The masks for the `cmd` of a command in topic `topicId` of `agentId` (its session's variables
   * read from the topic actor, when it runs); null when there is nothing to mask.
   */
  readonly masksFor = (agentId: string, topicId: string): ValueMasks | null => {
    const topic = this.root.system.get(topicId) as AnyActorRef | undefined;
    const session = (topic?.getSnapshot() as { context?: { session?: SessionState } } | undefined)?.context?.session;
    return this.secrets.masks(agentId, session?.vars);
  };

  /** {@link masksFor} by topic name; a null topic: {@link agentMasks}. */
  readonly topicMasks = (agentId: string, topic: string | null): ValueMasks | null =>
    (topic === null ? this.agentMasks(agentId) : this.masksFor(agentId, topicSystemId(agentId, topic)));

  /** The masks of a text of the agent that belongs to no one topic: its env-store values and every open session's variables. */
  readonly agentMasks = (agentId: string): ValueMasks | null =>
    this.secrets.agentMasks(agentId, this.sources?.directory.topicSnapshots(agentId).map((t) => t.context.session.vars) ?? []);

  /** What the snapshot and the catalogue read besides the tree (set once, when the system starts). */
  private sources: InspectionSources | undefined;

  /** Take the sources of the snapshot and the catalogue (the system, at start). */
  start(sources: InspectionSources): void {
    this.sources = sources;
    const now = () => sources.clock.now();
    let warned = false;
    // Always on: a topic's state changes are kept for a page opened later (its history). The tap hands
    // each snapshot event over uncopied; all but a topic's first and state-changing ones return at once.
    observeSnapshots(this.root.system, (ev) => {
      try {
        this.topicSnapshot(ev, now);
      } catch (err) {
        if (!warned) process.emitWarning(`topic history failed: ${errorMessage(err)}`);
        warned = true;
      }
    });
  }

  /** Record a topic's start and state changes in its history. */
  private topicSnapshot(ev: SnapshotEvent, now: () => number): void {
    const ref = ev.actorRef as { logic?: { id?: unknown }; systemId?: string };
    if (ref.logic?.id !== 'topicQueue' || ref.systemId === undefined) return;
    const value = (ev.snapshot as { value?: unknown }).value;
    if (ev.event.type === 'xstate.init') this.history.started(ref.systemId, value, now());
    else this.history.snapshot(ref.systemId, value, ev.event.type, now);
  }

  /** Forget what is kept of a topic that ended (its recent commands and history). */
  forgetTopic(topicId: string): void {
    this.recent.forget(topicId);
    this.history.forget(topicId);
  }

  private get from(): InspectionSources {
    if (!this.sources) throw new Error('the inspection has not started');
    return this.sources;
  }

  /** The snapshot of behaviour.md §13.2, read from the tree now. */
  state(): InspectionSnapshot {
    const s = this.from;
    return inspectionSnapshot({ directory: s.directory, info: s.info, clock: s.clock, recent: this.recent, history: this.history, secrets: this.secrets, agentExtras: s.extras });
  }

  /** GET /inspect/machines: every machine of the tree, read from the definitions. */
  machines(): Record<string, MachineView> {
    return machineCatalogue([...CORE_MACHINES, ...this.from.machines]);
  }

  /** Every inspection event of every actor in the tree; returns the unsubscribe function. */
  observe(observer: InspectionObserver): () => void {
    let warned = false;
    const sub = this.root.system.inspect((ev) => {
      try {
        observer(ev);
      } catch (err) {
        // A broken observer must never break the actor it watches; say so once per observer, not per event.
        if (!warned) process.emitWarning(`inspection observer failed: ${errorMessage(err)}`);
        warned = true;
      }
    });
    return () => sub.unsubscribe();
  }

  /** Every topic's `command.*` events (the trace recorder, the inspector). */
  observeCommands(listener: (ev: CommandEvent) => void): () => void {
    this.commandObservers.add(listener);
    return () => this.commandObservers.delete(listener);
  }

  /**
   * Called by the topics (one `actor.on('*')` each, `topicId` its system id): records finished and
   * refused commands, forwards to the command observers, if any.
   */
  command(topicId: string, ev: CommandEvent): void {
    this.recent.record(topicId, ev, this.masksFor);
    notify(this.commandObservers, ev, 'command');
  }

  /** Every topic's `session.*` events (behaviour.md §13.7), in the order the topics applied them. */
  observeSessions(listener: (ev: SessionEvent) => void): () => void {
    this.sessionObservers.add(listener);
    return () => this.sessionObservers.delete(listener);
  }

  /** Called by the topics with each `session.*` event they emit: kept in the topic's history, then handed on. */
  session(ev: SessionEvent): void {
    const topicId = topicSystemId(ev.agentId, ev.topic);
    const detail = this.history.session(topicId, ev, ev.type === 'session.navigated' ? this.docUri(topicId) : null);
    if (detail && this.historyObservers.size > 0) notify(this.historyObservers, { topicId, agentId: ev.agentId, detail, at: ev.at }, 'session');
    notify(this.sessionObservers, ev, 'session');
  }

  /** The uri of the document open in a topic now (its actor has applied the change it emits). */
  private docUri(topicId: string): string | null {
    const topic = this.root.system.get(topicId) as AnyActorRef | undefined;
    return (topic?.getSnapshot() as { context?: { session?: SessionState } } | undefined)?.context?.session?.doc?.uri ?? null;
  }

  /** Every webhook post the inbox takes (the trace recorder); returns the unsubscribe function. */
  observeIntake(listener: (ev: IntakeEvent) => void): () => void {
    this.intakeObservers.add(listener);
    return () => this.intakeObservers.delete(listener);
  }

  /** Called by the events service once a webhook post is stored. */
  intake(ev: IntakeEvent): void {
    notify(this.intakeObservers, ev, 'intake');
  }

  /** The registry of live actors: every actor with a system id, as a redacted plain record. */
  liveActors(now: number): LiveActor[] {
    const all = this.root.system.getAll() as Record<string, AnyActorRef>;
    return Object.entries(all)
      .filter(([id]) => id !== 'daemon')
      .map(([id, ref]) => describeActor(id, ref, now, (agentId, vars) => this.secrets.masks(agentId, vars)))
      .sort((a, b) => (a.actor < b.actor ? -1 : a.actor > b.actor ? 1 : 0));
  }

  /**
   * The live feed of behaviour.md §13.3: actor created/stopped, transitions and commands, redacted
   * (§13.4). Transitions and the others come as JSON text (one element of a frame's array),
   * commands as their facts, which `json` writes when they are sent (a coalesced feed writes only
   * those it keeps). Only snapshot events are read, through the snapshot tap (snapshotTap.ts: no
   * copy of every inspection event).
   */
  liveFeed(send: (m: LiveMessage) => void, clock: { now(): number }): { unsubscribe(): void; json(m: LiveMessage): string } {
    const serialiser = new InspectionSerialiser(clock, this.topicMasks);
    serialiser.seed(Object.values(this.root.system.getAll() as Record<string, AnyActorRef>));
    let warned = false;
    const message = (json: string, transitionOf?: string) => send(transitionOf === undefined ? { kind: 'other', json } : { kind: 'transition', actor: transitionOf, json });
    const offSnapshots = observeSnapshots(this.root.system, (ev) => {
      try {
        serialiser.fromSnapshot(ev, message);
      } catch (err) {
        // The feed must never break the actor it watches (XState calls it inside the actor's step); say so once.
        if (!warned) process.emitWarning(`inspection observer failed: ${errorMessage(err)}`);
        warned = true;
      }
    });
    const offCommands = this.observeCommands((ev) => send(serialiser.commandFacts(ev)));
    // Session changes are few: written at once, with the topic's masks of that moment.
    const onSession = (ev: HistorySessionChange) => send({ kind: 'other', json: sessionJson(ev, this.masksFor(ev.agentId, ev.topicId)) });
    this.historyObservers.add(onSession);
    return {
      unsubscribe: () => {
        offSnapshots();
        offCommands();
        this.historyObservers.delete(onSession);
      },
      json: (m) => (m.kind === 'command' ? serialiser.commandJson(m) : m.json),
    };
  }
}

/** Hand an event to each observer; a broken observer is reported and never breaks the topic that emitted it. */
function notify<E>(observers: ReadonlySet<(ev: E) => void>, ev: E, what: string): void {
  for (const l of observers) {
    try {
      l(ev);
    } catch (err) {
      process.emitWarning(`${what} observer failed: ${errorMessage(err)}`);
    }
  }
}
