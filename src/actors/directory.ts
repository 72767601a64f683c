import type { DocMeta } from '../domain/result.js';
import { sessionMeta } from '../domain/session.js';
import type { TopicStatus } from '../commands/types.js';
import type { InstallProgress } from '../domain/install.js';
import type { TopicRef } from '../domain/topic.js';
import { agentSystemId, capSystemId, installSystemId, topicChildId, topicSystemId, webhookSystemId, type AgentProfile } from '../machines/agent.js';
import type { CapabilityInput } from '../machines/capability.js';
import { SHELF_PREFIX } from '../machines/capabilityShelf.js';
import { installProgressOf, type InstallInput } from '../machines/install.js';
import { onShelves } from '../machines/shelf.js';
import { unregisteredProfile } from '../machines/agentRegistration.js';
import { agentsOf } from '../machines/agentShelf.js';
import { childrenOf } from '../machines/children.js';
import { shellSystemId, type ShellInput } from '../machines/shell.js';
import { initialTopicContext, type TopicInput, type TopicQueueContext } from '../machines/topicQueue.js';
import type { AnyActorRef } from 'xstate';
import type { ActorTree, AgentActor, CapabilityActor, DaemonActor, InstallActor, ShellActor, TopicActor, WebhookActor } from './tree.js';

/** One open topic as readers see it: its state, context and children, whether its actor runs yet or not. */
export interface TopicView {
  systemId: string;
  /** The queue state (spec §3): `idle`, `executing`, or `closed` while it ends. */
  value: string;
  context: TopicQueueContext;
  children: Record<string, AnyActorRef>;
}

const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const isTopicChild = (id: string): boolean => id.startsWith('topic:');

/**
 * The registered agents and their open topics, read from the actor tree (architecture.md, "One
 * read model"). An agent's profile is its actor's context; a topic's queue and session are its
 * actor's. Actors are spawned lazily, to keep start-up cheap: a registered agent that nothing has
 * touched since start-up is its profile here until it wakes, and an open topic that has run nothing
 * yet is a record of its agent. This object is the only code that knows: every other reader asks
 * it and gets the same answer either way.
 */
export class AgentDirectory {
  /**
   * The index of persisted profiles whose agents have no actor yet (loaded at start-up), by id (a
   * Map: agent ids are user text). An entry leaves when its agent wakes; from then on the actor is
   * the only holder and writer of the profile.
   */
  private readonly asleep = new Map<string, AgentProfile>();

  /**
   * @param topicInput what a topic of an agent starts with (queue limits, the owner's noun), given
   *   the time its first session began
   */
  constructor(private readonly tree: ActorTree, profiles: Iterable<AgentProfile>, private readonly topicInput: (agentId: string, ref: TopicRef, now: number) => TopicInput) {
    for (const p of profiles) this.asleep.set(p.id, p);
  }

  private get root(): DaemonActor {
    return this.tree.root;
  }

  // ---- agents ---------------------------------------------------------------------------------

  private awake(agentId: string): AgentActor | undefined {
    return this.root.system.get(agentSystemId(agentId)) as AgentActor | undefined;
  }

  /** The agent's profile, or undefined when it is not registered (or is being deleted). */
  profile(agentId: string): AgentProfile | undefined {
    const actor = this.awake(agentId);
    if (actor) {
      const snap = actor.getSnapshot();
      return snap.matches('active') ? snap.context.profile : undefined;
    }
    return this.asleep.get(agentId);
  }

  /** True when the agent is registered. */
  has(agentId: string): boolean {
    return this.profile(agentId) !== undefined;
  }

  /** Every registered agent's profile, sorted by id. */
  profiles(): AgentProfile[] {
    const out = [...this.asleep.values()];
    for (const [, ref] of agentsOf(this.root)) {
      const snap = (ref as AgentActor).getSnapshot();
      if (snap.matches('active')) out.push(snap.context.profile);
    }
    return out.sort((a, b) => byString(a.id, b.id));
  }

  /** How many agents are registered. */
  count(): number {
    let n = this.asleep.size;
    for (const [, ref] of agentsOf(this.root)) if ((ref as AgentActor).getSnapshot().matches('active')) n++;
    return n;
  }

  /** The actor of a registered agent, spawned from its profile on first touch; undefined when unknown. */
  agent(agentId: string): AgentActor | undefined {
    const actor = this.awake(agentId);
    if (actor) return actor.getSnapshot().matches('active') ? actor : undefined;
    return this.wake(agentId);
  }

  /** Spawn the actor of a registered agent that has none yet, from its stored profile. */
  private wake(agentId: string): AgentActor | undefined {
    const profile = this.asleep.get(agentId);
    if (!profile) return undefined;
    this.asleep.delete(agentId);
    this.root.send({ type: 'agent.spawn', profile, registered: true });
    return this.awake(agentId);
  }

  /**
   * The actor a registration (POST /agents) of `agentId` is sent to, in whatever state it is (one
   * being registered, deleted or stored queues it): a registered agent's, woken if asleep, or for
   * a new id a fresh actor that holds no profile until its first registration is stored.
   */
  registrant(agentId: string): AgentActor {
    const actor = this.awake(agentId) ?? this.wake(agentId);
    if (actor) return actor;
    this.root.send({ type: 'agent.spawn', profile: unregisteredProfile(agentId), registered: false });
    return this.awake(agentId) as AgentActor;
  }

  // ---- topics ---------------------------------------------------------------------------------

  /** The actor of (agent, topic), if the topic has one (it ran a command). */
  topic(agentId: string, topic: string): TopicActor | undefined {
    return this.root.system.get(topicSystemId(agentId, topic)) as TopicActor | undefined;
  }

  /** POST /sessions: open the topic (no actor until its first command). */
  openTopic(agent: AgentActor, ref: TopicRef, at: number): { created: boolean } {
    const before = agent.getSnapshot().context.topics;
    agent.send({ type: 'topic.open', ref, at });
    return { created: agent.getSnapshot().context.topics !== before };
  }

  /** The actor of (agent, topic), spawned when a command needs it; undefined when the agent cannot open it. */
  wakeTopic(agent: AgentActor, ref: TopicRef, now: number): TopicActor | undefined {
    const id = agent.getSnapshot().context.profile.id;
    const existing = this.topic(id, ref.topic);
    if (existing) return existing;
    agent.send({ type: 'topic.wake', ref, input: this.topicInput(id, ref, now) });
    return this.topic(id, ref.topic);
  }

  /** DELETE /sessions/{agent}/{topic}: false when the topic is not open. */
  closeTopic(agentId: string, topic: string, at: number): boolean {
    const agent = this.awake(agentId);
    if (!agent?.getSnapshot().context.topics.has(topic)) return false;
    agent.send({ type: 'topic.close', topic, at });
    return true;
  }

  /** Close every open topic of an agent (its home changed, behaviour.md §9.5). */
  closeTopics(agentId: string, at: number): void {
    const agent = this.awake(agentId);
    if (!agent) return;
    for (const topic of [...agent.getSnapshot().context.topics.keys()]) agent.send({ type: 'topic.close', topic, at });
  }

  /** The topic actors of an agent. */
  topicActors(agentId: string): TopicActor[] {
    const agent = this.awake(agentId);
    if (!agent) return [];
    return Object.entries(childrenOf(agent)).filter(([id]) => isTopicChild(id)).map(([, t]) => t as TopicActor);
  }

  /**
   * The snapshot of every open topic of an agent, sorted by topic: its actor's, or for a topic that
   * has run nothing yet the idle snapshot its actor will start with.
   */
  topicSnapshots(agentId: string): TopicView[] {
    const agent = this.awake(agentId);
    if (!agent) return [];
    const children = childrenOf(agent);
    const out: TopicView[] = [];
    for (const t of agent.getSnapshot().context.topics.values()) {
      const systemId = topicSystemId(agentId, t.ref.topic);
      const actor = children[topicChildId(t.ref.topic)] as TopicActor | undefined;
      if (actor) {
        const snap = actor.getSnapshot();
        out.push({ systemId, value: snap.value, context: snap.context, children: childrenOf(actor) });
      } else {
        out.push({ systemId, value: 'idle', context: initialTopicContext(this.topicInput(agentId, t.ref, t.createdAt)), children: {} });
      }
    }
    return out.sort((a, b) => byString(a.context.ref.topic, b.context.ref.topic));
  }

  /** Open topics of an agent with queue state, sorted by topic. */
  topics(agentId: string): TopicStatus[] {
    return this.topicSnapshots(agentId).map((t) => ({ session: t.context.session, executing: t.value === 'executing', queueLength: t.context.waiting.length }));
  }

  /** Open topics across all agents. */
  sessionCount(): number {
    let sessions = 0;
    for (const [, ref] of agentsOf(this.root)) sessions += (ref as AgentActor).getSnapshot().context.topics.size;
    return sessions;
  }

  // ---- children of features: capabilities, webhook tokens, installs, shells --------------------

  /** Spawn the actor of a live capability under its agent; undefined when the agent is unknown. */
  openCapability(input: CapabilityInput): CapabilityActor | undefined {
    this.agent(input.agentId)?.send({ type: 'cap.open', input });
    return this.capability(input.tokenId);
  }

  /** The actor of a live capability, or undefined (dead capabilities are archived, not actors). */
  capability(tokenId: string): CapabilityActor | undefined {
    return this.root.system.get(capSystemId(tokenId)) as CapabilityActor | undefined;
  }

  /** The live capability actors of an agent (on its capability shelves). */
  capabilities(agentId: string): CapabilityActor[] {
    const agent = this.awake(agentId);
    return agent ? onShelves(agent, SHELF_PREFIX).map(([, ref]) => ref as CapabilityActor) : [];
  }

  /** Every live capability actor. */
  allCapabilities(): CapabilityActor[] {
    return agentsOf(this.root).flatMap(([, agent]) => onShelves(agent, SHELF_PREFIX).map(([, ref]) => ref as CapabilityActor));
  }

  /** The webhook-token actor of an agent, spawned with the stored token's fingerprint and masked form on first use; undefined for an unknown agent. */
  webhook(agentId: string, stored: () => { fingerprint: string | null; masked: string | null }): WebhookActor | undefined {
    const existing = this.root.system.get(webhookSystemId(agentId)) as WebhookActor | undefined;
    if (existing) return existing;
    this.agent(agentId)?.send({ type: 'webhook.open', ...stored() });
    return this.root.system.get(webhookSystemId(agentId)) as WebhookActor | undefined;
  }

  /** Start one install as an `install:<install_id>` child of its agent; undefined when the agent is unknown. */
  openInstall(input: InstallInput): InstallActor | undefined {
    this.agent(input.agentId)?.send({ type: 'install.open', input });
    return this.root.system.get(installSystemId(input.installId)) as InstallActor | undefined;
  }

  /** The shell of an open bash topic, spawned (a child of the topic) with `input()` when it has none; undefined when the topic has no actor. */
  openShell(agentId: string, topic: string, input: () => ShellInput): ShellActor | undefined {
    const existing = this.shell(agentId, topic);
    if (existing) return existing;
    this.topic(agentId, topic)?.send({ type: 'shell.open', input: input() });
    return this.shell(agentId, topic);
  }

  /** Running installs of an agent with their progress (behaviour.md §13.2 `installs`), as kept: readers mask them. */
  installs(agentId: string): Array<InstallProgress & { request_id: string | null }> {
    return this.installSnapshots(agentId).map(installProgressOf);
  }

  /** The snapshots of an agent's running installs, by install id. */
  installSnapshots(agentId: string): Array<ReturnType<InstallActor['getSnapshot']>> {
    const agent = this.awake(agentId);
    if (!agent) return [];
    return Object.entries(childrenOf(agent))
      .filter(([id]) => id.startsWith('install:'))
      .map(([, ref]) => (ref as InstallActor).getSnapshot())
      .sort((a, b) => byString(a.context.installId, b.context.installId));
  }

  /** The shell of a bash topic, if it has one (behaviour.md §8.3). */
  shell(agentId: string, topic: string): ShellActor | undefined {
    return this.root.system.get(shellSystemId(agentId, topic)) as ShellActor | undefined;
  }

  /** Every live shell. */
  shells(): ShellActor[] {
    return Object.entries(this.root.system.getAll() as Record<string, ShellActor>).filter(([id]) => id.startsWith('shell:')).map(([, ref]) => ref);
  }

  /** GET /sessions rows of an agent (spec §4.6), read from its topics' snapshots, sorted by topic. */
  sessionRows(agentId: string): Array<{ topic: string; topic_type: string; executing: boolean; queue_length: number; doc: DocMeta | null }> {
    return this.topics(agentId).map((t) => ({
      topic: t.session.ref.topic, topic_type: t.session.ref.type, executing: t.executing, queue_length: t.queueLength, doc: sessionMeta(t.session),
    }));
  }
}
