import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CORE_HUBS } from '../commands/hubs.js';
import type { HubPage, Services, TopicStatus } from '../commands/types.js';
import type { AgentInput } from '../domain/agentInput.js';
import { LoomError } from '../domain/errors.js';
import { WIRES, nounTitle, unknownIdentity, type WireDescription } from '../domain/wire.js';
import type { AgentRecord } from '../domain/ports.js';
import type { QueueLimits, Ticket } from '../domain/ticket.js';
import type { HubName, TopicRef as TopicName } from '../domain/topic.js';
import { installError, type InstallOutcome, type InstallProgress } from '../domain/install.js';
import { agentSystemId, capSystemId, installSystemId, topicSystemId, webhookSystemId, type DeleteCounts } from '../machines/agent.js';
import type { CapabilityInput } from '../machines/capability.js';
import { agentsOf } from '../machines/agentShelf.js';
import type { InstallInput } from '../machines/install.js';
import type { ShellInput } from '../machines/shell.js';
import { nextTicketId } from '../machines/topicQueue.js';
import { checkAgentRoots, createHome } from '../effects/homePolicy.js';
import { killAll } from '../effects/processes.js';
import { disposeSession, followTopic, runTicket, type Submission, type TicketListener } from './commandRun.js';
import { deleteAgentActor } from './agentDeletion.js';
import { installOutcome } from './installWait.js';
import { FeatureSet, type SystemContribution } from './contributions.js';
import { Inspection } from './inspection.js';
import { inspectionSnapshot, type InspectionSnapshot } from './inspectionSnapshot.js';
import { CORE_MACHINES, machineCatalogue, type MachineView } from './machineCatalogue.js';
import { agentActor, allShells, installsOf, isTopicChild, sessionCount, shellOf, topicActor, topicStatuses, topicsOf } from './treeQueries.js';
import type { AgentSummary, CommandRequest, DeleteOutcome, RegisterOutcome, SystemDeps } from './systemTypes.js';
import { createTree, warn, type AgentRef, type CapabilityRef, type DaemonActor, type InstallRef, type ShellRef, type TopicRef, type WebhookRef } from './tree.js';

export type { Submission, TicketListener } from './commandRun.js';

export type { AgentSummary, CommandRequest, DeleteOutcome, RegisterOutcome, SystemDeps } from './systemTypes.js';

/**
 * The running system behind one facade (architecture.md): one actor tree rooted at the daemon
 * (`agent:<id>` → `topic:`, `cap:`, `webhook:` children) that owns the runtime state, the one
 * command path of /exec and /mcp, and the typed contributions of the features. Routes and features
 * reach agents, topics and commands only through these methods.
 */
export class LoomSystem {
  readonly services: Services;
  readonly limits: QueueLimits;
  /** The wire this daemon serves (behaviour.md §11): identity noun, state folder, queue limits. */
  readonly wire: WireDescription;
  readonly inspection: Inspection;
  private readonly root: DaemonActor;
  private readonly features = new FeatureSet();
  private readonly hubs = new Map<HubName, HubPage>(Object.entries(CORE_HUBS) as Array<[HubName, HubPage]>);
  /** The callers of each topic's tickets in flight, by ticket id (a topic's listeners end with it). */
  private readonly tickets = new WeakMap<TopicRef, Map<string, TicketListener>>();

  constructor(private readonly deps: SystemDeps) {
    this.wire = WIRES[deps.info.wire];
    this.limits = deps.queue ?? this.wire.queue;
    this.services = {
      info: deps.info, clock: deps.clock, agents: deps.agents, env: deps.env, packages: deps.packages,
      topics: (id) => this.topicStatuses(id),
      counts: () => this.counts(),
      webhookUrl: (a) => (a.webhookToken ? `http://127.0.0.1:${deps.info.port()}/webhook/${a.webhookToken}` : null),
      hubs: this.hubs,
    };
    this.root = createTree({
      clock: deps.clock,
      run: (session, ticket) => runTicket({ agents: deps.agents, registry: deps.registry, services: this.services }, session, ticket),
      dispose: disposeSession,
      cascade: (agentId, counts) => this.cascade(agentId, counts),
      install: {
        run: (input, report, signal) => this.features.installEffects?.run(input, report, signal)
          ?? Promise.reject(installError('Installs are not available in this build', 'COMMAND_UNSUPPORTED')),
        wipe: (installId, dir) => this.features.installEffects?.wipe(installId, dir),
      },
    });
    this.inspection = new Inspection(this.root, deps.env);
    this.root.start();
    // Registered agents stay dormant (their registry record only) until something touches them:
    // spawning a thousand agent actors was most of a cold start (issue 13: 218 ms of 827).
  }

  /** Take a feature's typed contribution (start-up only): commands, hubs, services and hooks. */
  install(c: SystemContribution): void {
    this.features.add(c);
    if (c.commands) this.deps.registry.register(...c.commands);
    for (const fb of c.fallbacks ?? []) this.deps.registry.addFallback(fb);
    for (const [name, page] of Object.entries(c.hubs ?? {}) as Array<[HubName, HubPage]>) this.hubs.set(name, page);
    Object.assign(this.services, c.services ?? {});
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
    return inspectionSnapshot({
      root: this.root, info: this.deps.info, clock: this.deps.clock, agents: this.deps.agents, recent: this.inspection.recent,
      secrets: this.inspection.secrets,
      agentExtras: (id) => this.features.inspectAgent(id),
    });
  }

  /** GET /inspect/machines: every machine of the tree, read from the definitions. */
  machines(): Record<string, MachineView> {
    return machineCatalogue([...CORE_MACHINES, ...this.features.machines()]);
  }

  // ---- agents (spec §4.3) -------------------------------------------------------------------

  private spawnAgent(rec: AgentRecord): AgentRef {
    this.root.send({ type: 'agent.spawn', id: rec.id, home: rec.home });
    return this.root.system.get(agentSystemId(rec.id)) as AgentRef;
  }

  /**
   * The actor of a registered agent, spawned on first touch (a dormant agent, or one a bug stopped);
   * undefined when unknown. A dormant agent has no children: no topic, capability or install.
   */
  private agent(agentId: string): AgentRef | undefined {
    const ref = this.root.system.get(agentSystemId(agentId)) as AgentRef | undefined;
    if (ref) return ref;
    const rec = this.deps.agents.get(agentId);
    return rec ? this.spawnAgent(rec) : undefined;
  }

  /** True when the agent is registered. */
  hasAgent(agentId: string): boolean {
    return this.deps.agents.get(agentId) !== undefined;
  }

  /** The home of a registered agent, or undefined. */
  agentHome(agentId: string): string | undefined {
    return this.deps.agents.get(agentId)?.home;
  }

  /** GET /agents: registered agents sorted by id; tokens never appear (behaviour.md §9.5). */
  listAgents(): AgentSummary[] {
    return this.deps.agents.list().map((a) => ({ id: a.id, home: a.home, allowedPaths: a.allowedPaths, createdAt: a.createdAt }));
  }

  /** Default home of an agent (behaviour.md §1.4); the user wire has none (its routes require `home`). */
  defaultHome(agentId: string): string {
    return join(this.deps.info.dataDir, this.wire.stateRoot, agentId, 'home');
  }

  /** POST /agents (spec §4.3): idempotent; only provided fields change; createdAt kept. */
  async registerAgent(input: AgentInput): Promise<RegisterOutcome> {
    // behaviour.md §9.5 order: home and allowed_paths (policy: issue 12), then contributions, all before any change.
    checkAgentRoots({ dataDir: this.deps.info.dataDir, agentId: input.agentId, home: input.home, allowedPaths: input.allowedPaths, defaultHomes: this.wire.defaultHomes });
    this.features.validateRegistration(input);
    const existing = this.deps.agents.get(input.agentId);
    const home = input.home !== undefined ? resolve(input.home) : existing?.home ?? this.defaultHome(input.agentId);
    createHome(home);
    const record: AgentRecord = {
      ...(existing ?? {}),
      id: input.agentId,
      home,
      allowedPaths: input.allowedPaths ?? existing?.allowedPaths ?? [],
      createdAt: existing?.createdAt ?? new Date(this.deps.clock.now()).toISOString(),
    };
    await this.deps.agents.put(record);
    const agent = this.agent(record.id) as AgentRef;
    if (existing && existing.home !== home) {
      agent.send({ type: 'agent.update', home });
      // behaviour.md §9.5: a changed home disposes the agent's sessions.
      this.closeAllSessions(agent);
    }
    const extra = await this.features.applyRegistration(() => this.deps.agents.get(record.id) ?? record, input);
    return { id: record.id, home: record.home, created: !existing, extra };
  }

  /** Ensure an agent exists with a default home (MCP auto-registration, spec §4.8). */
  async ensureAgent(agentId: string): Promise<void> {
    if (!this.hasAgent(agentId)) await this.registerAgent({ agentId, webhook: false, body: { agent_id: agentId } });
  }

  /** DELETE /agents/{id} (spec §4.3 rule 3): the cascade is the agent actor's exit (agentDeletion.ts). The home stays. */
  async deleteAgent(agentId: string): Promise<DeleteOutcome> {
    const agent = this.hasAgent(agentId) ? this.agent(agentId) : undefined;
    if (!agent) return { id: agentId, deleted: false, counts: { revoked_capabilities: 0, disposed_sessions: 0 } };
    return deleteAgentActor(agent, agentId, this.deps.clock.now());
  }

  /** The I/O of DELETE /agents/{id} (the agent machine's `cascade`): feature steps, state folder, registry entry. */
  private async cascade(agentId: string, counts: DeleteCounts): Promise<DeleteCounts> {
    const total = await this.features.deleteSteps(agentId, counts);
    rmSync(join(this.deps.info.dataDir, this.wire.stateRoot, agentId, 'state'), { recursive: true, force: true });
    await this.deps.agents.remove(agentId);
    this.inspection.secrets.forget(agentId);
    return total;
  }

  // ---- topics and commands (spec §3, §4.6–§4.8) ---------------------------------------------

  private knownAgent(agentId: string): AgentRef {
    const agent = this.agent(agentId);
    if (!agent) throw new LoomError(401, unknownIdentity(this.wire, agentId));
    return agent;
  }

  /**
   * POST /sessions: the topic of (agent, topic), opened if absent. A new topic is dormant (a record
   * in its agent) until its first command wakes it.
   */
  openTopic(agentId: string, ref: TopicName): { created: boolean } {
    if (topicActor(this.root, agentId, ref.topic)) return { created: false };
    const agent = this.knownAgent(agentId);
    if (agent.getSnapshot().context.dormant.has(ref.topic)) return { created: false };
    agent.send({ type: 'topic.open', ref, at: this.deps.clock.now() });
    return { created: true };
  }

  /** The actor of (agent, topic), spawned (from its dormant record, or new) when a command needs it. */
  private wakeTopic(agentId: string, ref: TopicName): TopicRef {
    const existing = topicActor(this.root, agentId, ref.topic);
    if (existing) return existing;
    const input = { agentId, ref, maxWaiting: this.limits.max, waitMs: this.limits.waitMs, now: this.deps.clock.now(), owner: nounTitle(this.wire) };
    this.knownAgent(agentId).send({ type: 'topic.wake', ref, input });
    const actor = topicActor(this.root, agentId, ref.topic);
    if (!actor) throw new Error(`agent ${agentId} could not open topic ${ref.topic}`);
    const systemId = topicSystemId(agentId, ref.topic);
    this.tickets.set(actor, followTopic(actor, (ev) => this.inspection.command(systemId, ev), () => this.inspection.recent.forget(systemId)));
    return actor;
  }

  /**
   * Submit a command to its topic (spec §3): `exec` queues, `mcp` runs only when idle else BUSY
   * (behaviour.md §10.3). The listener gets this ticket's `command.*` events until its outcome
   * (refused or finished). Must not be called from inside a topic's own listeners.
   */
  submit(req: CommandRequest, listener: TicketListener): Submission {
    const actor = this.wakeTopic(req.agentId, req.ref);
    const ticket: Ticket = {
      id: nextTicketId(actor.getSnapshot().context), cmd: req.cmd, requestId: req.requestId, via: req.via, queuedAt: this.deps.clock.now(), startedAt: null,
    };
    const listeners = this.tickets.get(actor) as Map<string, TicketListener>;
    listeners.set(ticket.id, listener);
    actor.send({ type: req.via === 'mcp' ? 'command.try' : 'command.arrive', ticket });
    return {
      ticketId: ticket.id,
      leave: () => {
        // A running command goes on and its result is discarded (behaviour.md §9.4).
        if (actor.getSnapshot().context.running?.id === ticket.id) return;
        actor.send({ type: 'command.leave', ticketId: ticket.id });
        listeners.delete(ticket.id);
      },
    };
  }

  /** DELETE /sessions/{agent_id}/{topic}: false when absent (spec §4.6). A dormant topic just ends. */
  closeSession(agentId: string, topic: string): boolean {
    const actor = topicActor(this.root, agentId, topic);
    if (actor) {
      actor.send({ type: 'session.close', at: this.deps.clock.now() });
      return true;
    }
    const agent = agentActor(this.root, agentId);
    if (!agent?.getSnapshot().context.dormant.has(topic)) return false;
    agent.send({ type: 'topic.forget', topic });
    return true;
  }

  private closeAllSessions(agent: AgentRef): void {
    const snap = agent.getSnapshot();
    for (const [id, t] of Object.entries(snap.children)) if (isTopicChild(id)) (t as TopicRef).send({ type: 'session.close', at: this.deps.clock.now() });
    for (const topic of snap.context.dormant.keys()) agent.send({ type: 'topic.forget', topic });
  }

  /** Topics of an agent with queue state, sorted by topic (read from the topic actors and the dormant records). */
  topicStatuses(agentId: string): TopicStatus[] {
    return topicStatuses(this.root, agentId);
  }

  /** Registered agent ids, sorted (GET /sessions without a filter); a dormant agent has no sessions. */
  agentIds(): string[] {
    return this.deps.agents.list().map((a) => a.id);
  }

  /** GET /health counts: registered agents, sessions = open topics (live and dormant) across the agents in the tree. */
  counts(): { agents: number; sessions: number } {
    return { agents: this.deps.agents.count(), sessions: sessionCount(this.root) };
  }

  // ---- children of features (capabilities, webhook tokens) ----------------------------------

  /** Spawn the actor of a live capability under its agent; undefined when the agent is unknown. */
  spawnCapability(agentId: string, input: CapabilityInput): CapabilityRef | undefined {
    this.agent(agentId)?.send({ type: 'cap.open', input });
    return this.capability(input.tokenId);
  }

  /** The actor of a live capability, or undefined (dead capabilities are records only). */
  capability(tokenId: string): CapabilityRef | undefined {
    return this.root.system.get(capSystemId(tokenId)) as CapabilityRef | undefined;
  }

  /** The webhook-token actor of an agent, spawned with the stored fingerprint on first use. */
  webhook(agentId: string, storedFingerprint: string | null): WebhookRef | undefined {
    const existing = this.root.system.get(webhookSystemId(agentId)) as WebhookRef | undefined;
    if (existing) return existing;
    this.agent(agentId)?.send({ type: 'webhook.open', fingerprint: storedFingerprint });
    return this.root.system.get(webhookSystemId(agentId)) as WebhookRef | undefined;
  }

  // ---- installs (spec §3 Package install) -------------------------------------------------

  /**
   * Run one install as an `install:<install_id>` child of its agent and resolve with its outcome
   * (the machine's output), whatever state it ends in. `signal` cancels it (the topic was closed).
   */
  runInstall(input: InstallInput, signal?: AbortSignal): Promise<InstallOutcome> {
    const agent = this.agent(input.agentId);
    if (!agent) return Promise.resolve({ ok: false, code: 'CONFLICT', message: `Agent ${input.agentId} was deleted` });
    agent.send({ type: 'install.open', input });
    const ref = this.root.system.get(installSystemId(input.installId)) as InstallRef | undefined;
    if (!ref) return Promise.resolve({ ok: false, code: 'INTERNAL_ERROR', message: 'Internal error: the install could not start' });
    return installOutcome(ref, signal);
  }

  /** Running installs of an agent with their progress (behaviour.md §13.2 `installs`), read from the tree. */
  installs(agentId: string): Array<InstallProgress & { request_id: string | null }> {
    return installsOf(this.root, agentId);
  }

  /** The shell of a bash topic, or undefined when it has none (behaviour.md §8.3). */
  shell(agentId: string, topic: string): ShellRef | undefined {
    return shellOf(this.root, agentId, topic);
  }

  /** The shell of an open bash topic, spawned (a child of the topic) with `input()` when it has none; undefined when the topic is not open. */
  openShell(agentId: string, topic: string, input: () => ShellInput): ShellRef | undefined {
    const existing = this.shell(agentId, topic);
    if (existing) return existing;
    topicActor(this.root, agentId, topic)?.send({ type: 'shell.open', input: input() });
    return this.shell(agentId, topic);
  }

  /** Every live shell (shutdown). */
  shells(): ShellRef[] {
    return allShells(this.root);
  }

  /** Shutdown (behaviour.md §1.1): feature hooks (end streams), sessions, child process groups, the tree. */
  async shutdown(): Promise<void> {
    await this.features.shutdown(warn);
    for (const [id] of agentsOf(this.root)) {
      for (const t of topicsOf(this.root, id)) await disposeSession(t.getSnapshot().context.session).catch((err: unknown) => warn('closing a session', err));
    }
    this.root.stop();
    killAll('SIGKILL');
  }
}
