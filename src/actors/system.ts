import { join } from 'node:path';
import { CORE_HUBS } from '../commands/hubs.js';
import type { HubPage, Services, TopicStatus } from '../commands/types.js';
import type { AgentInput } from '../domain/agentInput.js';
import { LoomError } from '../domain/errors.js';
import { WIRES, nounTitle, unknownIdentity, type WireDescription } from '../domain/wire.js';
import type { InstallProgress } from '../domain/install.js';
import type { QueueLimits } from '../domain/ticket.js';
import type { HubName, TopicRef } from '../domain/topic.js';
import { topicSystemId, type AgentProfile } from '../machines/agent.js';
import { checkAgentRoots } from '../effects/homePolicy.js';
import { effectiveNetwork, effectiveSandbox } from '../domain/sandbox.js';
import { killAll } from '../effects/processes.js';
import { followTopic, runTicket, submitTicket, type Submission, type TicketListener } from './commandRun.js';
import { purgeHome, purgeRefusal } from '../effects/homePurge.js';
import { deleteAgentActor } from './agentDeletion.js';
import { registerWithAgent } from './agentRegistration.js';
import { deletionCascade, persistRegistration, stateFolderOf, type AgentEffectDeps } from './agentEffects.js';
import { FeatureSet, type SystemContribution } from './contributions.js';
import { Inspection } from '../services/inspection.js';
import { SessionSignals } from './sessionSignals.js';
import type { InspectionSnapshot } from '../services/inspectionSnapshot.js';
import { AgentDirectory } from './directory.js';
import type { AgentSummary, CommandRequest, DeleteOutcome, RegisterOutcome, SystemDeps } from './systemTypes.js';
import { ActorTree, warn, type AgentActor, type TopicActor } from './tree.js';

export type { Submission, TicketListener } from './commandRun.js';

export type { AgentSummary, CommandRequest, DeleteOutcome, RegisterOutcome, SystemDeps } from './systemTypes.js';

/**
 * The running system behind one facade (architecture.md): one actor tree rooted at the daemon
 * (`agent:<id>` → `topic:`, `cap:`, `webhook:` children) that owns the runtime state, the one
 * command path of /exec and /mcp, and the typed contributions of the features. Routes and features
 * reach agents, topics and commands only through these methods.
 */
export class LoomSystem {
  readonly limits: QueueLimits;
  /** The wire this daemon serves (behaviour.md §11): identity noun, state folder, queue limits. */
  readonly wire: WireDescription;
  readonly inspection: Inspection;
  /** The actor tree (started by `start`). */
  private readonly tree = new ActorTree();
  /** The registered agents and their topics (the one object that knows which actors are spawned). */
  readonly directory: AgentDirectory;
  private started: Services | undefined;
  private readonly features = new FeatureSet();
  /** Abort handles of sessions (kept with the actors, not in the topics' context). */
  private readonly signals = new SessionSignals();
  private readonly hubs = new Map<HubName, HubPage>(Object.entries(CORE_HUBS) as Array<[HubName, HubPage]>);
  /** The callers of each topic's tickets in flight, by ticket id (a topic's listeners end with it). */
  private readonly tickets = new WeakMap<TopicActor, Map<string, TicketListener>>();

  constructor(private readonly deps: SystemDeps) {
    this.wire = WIRES[deps.info.wire];
    this.limits = deps.queue ?? this.wire.queue;
    this.inspection = new Inspection(this.tree, deps.env);
    // The registry is read here, once: from then on the actors (through the directory) answer.
    const owner = nounTitle(this.wire);
    this.directory = new AgentDirectory(this.tree, deps.agents.list().map(({ webhookToken: _token, ...profile }) => profile),
      (agentId, ref, now) => ({ agentId, ref, maxWaiting: this.limits.max, waitMs: this.limits.waitMs, now, owner }));
  }

  /** Take a feature's typed contribution (start-up, before `start`): commands, hubs, services, actors and hooks. */
  install(c: SystemContribution): void {
    if (this.started) throw new Error('features are installed before the system starts');
    this.features.add(c);
    if (c.commands) this.deps.registry.register(...c.commands);
    for (const fb of c.fallbacks ?? []) this.deps.registry.addFallback(fb);
    for (const [name, page] of Object.entries(c.hubs ?? {}) as Array<[HubName, HubPage]>) this.hubs.set(name, page);
  }

  /**
   * Start the actor tree with every feature's part of its machines, then the features' start-up
   * steps (actors of stored capabilities). The services commands reach are fixed from here on.
   */
  async start(): Promise<void> {
    const services: Services = {
      ...this.features.services(),
      info: this.deps.info, clock: this.deps.clock, env: this.deps.env,
      packages: this.features.services().packages ?? this.deps.packages,
      topics: (id) => this.directory.topics(id),
      changeSession: (agentId, topic, sessionId, change) => this.directory.topic(agentId, topic)?.send({ type: 'session.change', sessionId, change, at: this.deps.clock.now() }),
      counts: () => ({ agents: this.directory.count(), sessions: this.directory.sessionCount() }),
      hubs: this.hubs,
    };
    // One object for the daemon's life; contract tests put test doubles on it (document tests).
    this.started = services;
    const { features, signals, directory, inspection } = this;
    const agentDeps: AgentEffectDeps = {
      clock: this.deps.clock, agents: this.deps.agents, sandboxDefault: this.deps.info.sandbox ?? 'none',
      defaultHome: (id) => this.defaultHome(id), stateFolder: stateFolderOf(this.deps.info.dataDir, this.wire.stateRoot),
      deleteSteps: (id, counts) => features.deleteSteps(id, counts), forget: (id) => inspection.secrets.forget(id),
    };
    const commandDeps = { directory, registry: this.deps.registry, services, signals };
    this.tree.start({
      clock: this.deps.clock,
      run: (session, ticket) => runTicket(commandDeps, session, ticket),
      dispose: (session) => {
        signals.end(session.id);
        features.sessionEnded(session);
      },
      cascade: deletionCascade(agentDeps),
      persist: persistRegistration(agentDeps),
      features: features.actors(),
    });
    this.inspection.start({ directory: this.directory, info: this.deps.info, clock: this.deps.clock, extras: (id) => this.features.inspectAgent(id), machines: this.features.machines() });
    await this.features.start();
  }

  /** What commands reach (fixed when the system starts). */
  get services(): Services {
    if (!this.started) throw new Error('the system has not started');
    return this.started;
  }

  /**
   * The `/describe` capabilities (behaviour.md §9.3): the core four, then what the features added —
   * on the agent wire; the user wire lists only its core four (behaviour.md §11).
   */
  describeCapabilities(): Record<string, unknown> {
    const core = { describe: {}, [this.wire.listField]: {}, sessions: {}, exec: {} };
    if (!this.wire.featureCapabilities) return core;
    return this.features.describe(core);
  }

  // ---- state inspector (behaviour.md §13) -----------------------------------------------------

  /** The snapshot of behaviour.md §13.2, read from the tree now. */
  inspectState(): InspectionSnapshot {
    return this.inspection.state();
  }

  // ---- agents (spec §4.3) -------------------------------------------------------------------

  /** True when the agent is registered. */
  hasAgent(agentId: string): boolean {
    return this.directory.has(agentId);
  }

  /** The profile of a registered agent (home, allowed paths), or undefined. */
  agentProfile(agentId: string): AgentProfile | undefined {
    return this.directory.profile(agentId);
  }

  /** The home of a registered agent, or undefined. */
  agentHome(agentId: string): string | undefined {
    return this.directory.profile(agentId)?.home;
  }

  /** GET /agents: registered agents sorted by id; tokens never appear (behaviour.md §9.5). */
  listAgents(): AgentSummary[] {
    return this.directory.profiles().map((a) => ({
      id: a.id, home: a.home, allowedPaths: a.allowedPaths, createdAt: a.createdAt,
      sandbox: effectiveSandbox(a.sandbox, this.deps.info.sandbox ?? 'none'), sandbox_source: a.sandbox ? 'agent' : 'default', network: effectiveNetwork(a.network),
    }));
  }

  /** Default home of an agent (behaviour.md §1.4); the user wire has none (its routes require `home`). */
  defaultHome(agentId: string): string {
    return join(this.deps.info.dataDir, this.wire.stateRoot, agentId, 'home');
  }

  /**
   * POST /agents (spec §4.3): idempotent; only provided fields change; createdAt kept. Checked
   * first (behaviour.md §9.5: home policy, then contributions, all before any change), then sent
   * to the agent's actor, which stores it in its turn (machines/agent.ts).
   */
  async registerAgent(input: AgentInput): Promise<RegisterOutcome> {
    checkAgentRoots({ dataDir: this.deps.info.dataDir, agentId: input.agentId, home: input.home, allowedPaths: input.allowedPaths, defaultHomes: this.wire.defaultHomes });
    this.features.validateRegistration(input);
    const stored = await registerWithAgent((id) => this.directory.registrant(id), input);
    const extra = await this.features.applyRegistration(() => this.directory.profile(stored.profile.id) ?? stored.profile, input);
    return { id: stored.profile.id, home: stored.profile.home, created: stored.created, extra };
  }

  /** Ensure an agent exists with a default home (MCP auto-registration, spec §4.8). */
  async ensureAgent(agentId: string): Promise<void> {
    if (!this.hasAgent(agentId)) await this.registerAgent({ agentId, webhook: false, body: { agent_id: agentId } });
  }

  /**
   * DELETE /agents/{id} (spec §4.3 rule 3): the cascade is the agent actor's exit (agentDeletion.ts).
   * The home stays unless `purge` (behaviour.md §17, effects/homePurge.ts): a refused purge deletes nothing.
   */
  async deleteAgent(agentId: string, purge?: { force: boolean }): Promise<DeleteOutcome> {
    const agent = this.directory.agent(agentId);
    if (!agent) return { id: agentId, deleted: false, counts: { revoked_capabilities: 0, disposed_sessions: 0 } };
    const home = this.agentHome(agentId);
    const target = purge && home !== undefined ? { agentId, home, defaultHome: this.wire.defaultHomes ? this.defaultHome(agentId) : null, force: purge.force } : null;
    const refusal = target && purgeRefusal(target);
    if (refusal) throw refusal;
    const outcome = deleteAgentActor(agent, agentId, this.deps.clock.now());
    if (!target) return outcome;
    const done = await outcome;
    purgeHome(target);
    return { ...done, purgedHome: target.home };
  }

  // ---- topics and commands (spec §3, §4.6–§4.8) ---------------------------------------------

  private knownAgent(agentId: string): AgentActor {
    const agent = this.directory.agent(agentId);
    if (!agent) throw new LoomError(401, unknownIdentity(this.wire, agentId));
    return agent;
  }

  /** POST /sessions: the topic of (agent, topic), opened if absent (its actor starts with its first command). */
  openTopic(agentId: string, ref: TopicRef): { created: boolean } {
    return this.directory.openTopic(this.knownAgent(agentId), ref, this.deps.clock.now());
  }

  /** The actor of (agent, topic), spawned when a command needs it. */
  private wakeTopic(agentId: string, ref: TopicRef): TopicActor {
    const existing = this.directory.topic(agentId, ref.topic);
    if (existing) return existing;
    const actor = this.directory.wakeTopic(this.knownAgent(agentId), ref, this.deps.clock.now());
    if (!actor) throw new LoomError(401, unknownIdentity(this.wire, agentId));
    const systemId = topicSystemId(agentId, ref.topic);
    this.tickets.set(actor, followTopic(actor, (ev) => this.inspection.command(systemId, ev), () => this.inspection.forgetTopic(systemId), (ev) => this.inspection.session(ev)));
    return actor;
  }

  /**
   * Submit a command to its topic (spec §3): `exec` queues, `mcp` runs only when idle else BUSY
   * (behaviour.md §10.3). The listener gets this ticket's `command.*` events until its outcome
   * (refused or finished). Must not be called from inside a topic's own listeners.
   */
  submit(req: CommandRequest, listener: TicketListener): Submission {
    const actor = this.wakeTopic(req.agentId, req.ref);
    const ticket = { cmd: req.cmd, requestId: req.requestId, via: req.via, queuedAt: this.deps.clock.now(), startedAt: null };
    return submitTicket(actor, this.tickets.get(actor) as Map<string, TicketListener>, ticket, listener);
  }

  /** DELETE /sessions/{agent_id}/{topic}: false when the topic is not open (spec §4.6). */
  closeSession(agentId: string, topic: string): boolean {
    return this.directory.closeTopic(agentId, topic, this.deps.clock.now());
  }

  /** GET /sessions rows of an agent (spec §4.6), sorted by topic. */
  sessionRows(agentId: string): ReturnType<AgentDirectory['sessionRows']> {
    return this.directory.sessionRows(agentId);
  }

  /** Open topics of an agent with queue state, sorted by topic. */
  topicStatuses(agentId: string): TopicStatus[] {
    return this.directory.topics(agentId);
  }

  /** Registered agent ids, sorted (GET /sessions without a filter). */
  agentIds(): string[] {
    return this.directory.profiles().map((a) => a.id);
  }

  /** GET /health counts: registered agents, and sessions (open topics) across them. */
  counts(): { agents: number; sessions: number } {
    return { agents: this.directory.count(), sessions: this.directory.sessionCount() };
  }

  /** Running installs of an agent with their progress, as kept (GET /installs reads them masked, through the install service). */
  installs(agentId: string): Array<InstallProgress & { request_id: string | null }> {
    return this.directory.installs(agentId);
  }

  /** Shutdown (behaviour.md §1.1): feature hooks (end streams), sessions, child process groups, the tree. */
  async shutdown(): Promise<void> {
    await this.features.shutdown(warn);
    for (const { id } of this.directory.profiles()) {
      for (const t of this.directory.topicActors(id)) this.signals.end(t.getSnapshot().context.session.id);
    }
    this.tree.root.stop();
    killAll('SIGKILL');
  }
}
