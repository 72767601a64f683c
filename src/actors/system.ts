import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Actor } from 'xstate';
import type { AgentInput } from '../domain/agentInput.js';
import { errorMessage } from '../domain/errors.js';
import { QUEUE_MAX, QUEUE_WAIT_MS } from '../domain/limits.js';
import type { AgentRecord, AgentStore, Clock, EnvStore, PackageRegistry } from '../domain/ports.js';
import { fail, type CommandResult, type DocMeta } from '../domain/result.js';
import { sessionMeta, type SessionState } from '../domain/session.js';
import type { TopicRef } from '../domain/topic.js';
import { agentMachine } from '../machines/agent.js';
import { parseCommand, type CommandRegistry } from '../commands/registry.js';
import type { DaemonInfo, Services, TopicStatus } from '../commands/types.js';
import { checkAgentRoots, createHome } from '../effects/homePolicy.js';
import { killAll } from '../effects/processes.js';
import { ActorFactory } from './inspection.js';
import { TopicActor, type ExecSink } from './topicActor.js';

/** The result of one command as the channel reports it (spec §2 head, §4.7 content). */
export interface ExecResult extends CommandResult {
  meta: DocMeta | null;
  topic: string;
  topicType: string;
}

/** A step of the DELETE /agents cascade (spec §4.3 rule 3); returns counts to add to the response. */
export type DeleteStep = (agentId: string) => Promise<Record<string, number> | void> | Record<string, number> | void;

/** A feature's part in POST /agents (capability pairing, webhook creation). */
export interface RegistrationExtension {
  /** Throw a LoomError to refuse before anything changes (spec §4.3 rule 2). */
  validate?(input: AgentInput): void;
  /** After the agent is stored: extra response fields. */
  apply?(agent: AgentRecord, input: AgentInput): Promise<Record<string, unknown>> | Record<string, unknown>;
}

export interface SystemDeps {
  info: DaemonInfo;
  clock: Clock;
  agents: AgentStore;
  env: EnvStore;
  packages: PackageRegistry;
  registry: CommandRegistry;
  queue?: { max: number; waitMs: number };
}

interface AgentEntry {
  actor: Actor<typeof agentMachine>;
  topics: Map<string, TopicActor>;
}

/**
 * The running system behind one facade (architecture.md): agents and their topics as actors,
 * the command path shared by /exec and /mcp, and the extension points later features use.
 */
export class LoomSystem {
  readonly factory: ActorFactory;
  readonly services: Services;
  readonly deleteSteps: DeleteStep[] = [];
  readonly registration: RegistrationExtension[] = [];
  readonly shutdownHooks: Array<() => void | Promise<void>> = [];
  private readonly agents = new Map<string, AgentEntry>();

  constructor(readonly deps: SystemDeps) {
    this.factory = new ActorFactory(deps.clock);
    this.services = {
      info: deps.info, clock: deps.clock, agents: deps.agents, env: deps.env, packages: deps.packages,
      topics: (id) => this.topicStatuses(id),
      counts: () => this.counts(),
      webhookUrl: (a) => (a.webhookToken ? `http://127.0.0.1:${deps.info.port()}/webhook/${a.webhookToken}` : null),
      ext: new Map(),
    };
    for (const rec of deps.agents.list()) this.entry(rec);
  }

  private entry(rec: AgentRecord): AgentEntry {
    let e = this.agents.get(rec.id);
    if (!e) {
      const actor = this.factory.create(agentMachine, { id: rec.id, home: rec.home }, `agent:${rec.id}`);
      actor.start();
      e = { actor, topics: new Map() };
      this.agents.set(rec.id, e);
    }
    return e;
  }

  /** Default home of an agent (behaviour.md §1.4). */
  defaultHome(agentId: string): string {
    return join(this.deps.info.dataDir, 'agents', agentId, 'home');
  }

  /** POST /agents (spec §4.3): idempotent; only provided fields change; createdAt kept. */
  async registerAgent(input: AgentInput): Promise<Record<string, unknown>> {
    // behaviour.md §9.5 order: home and allowed_paths (policy: issue 12), then extensions, all before any change.
    checkAgentRoots({ dataDir: this.deps.info.dataDir, agentId: input.agentId, home: input.home, allowedPaths: input.allowedPaths });
    for (const ext of this.registration) ext.validate?.(input);
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
    const e = this.entry(record);
    if (existing && existing.home !== home) {
      e.actor.send({ type: 'agent.update', home });
      await this.disposeSessions(input.agentId);
    }
    const out: Record<string, unknown> = { agent_id: record.id, home: record.home, created: !existing };
    for (const ext of this.registration) Object.assign(out, await ext.apply?.(this.deps.agents.get(record.id) ?? record, input));
    return out;
  }

  /** Ensure an agent exists with a default home (MCP auto-registration, spec §4.8). */
  async ensureAgent(agentId: string): Promise<AgentRecord> {
    const rec = this.deps.agents.get(agentId);
    if (rec) return rec;
    await this.registerAgent({ agentId, webhook: false, body: { agent_id: agentId } });
    return this.deps.agents.get(agentId) as AgentRecord;
  }

  /** DELETE /agents/{id} (spec §4.3 rule 3): sessions, feature steps, state folder, registry entry; the home stays. */
  async deleteAgent(agentId: string): Promise<Record<string, unknown>> {
    const counts: Record<string, number> = { revoked_capabilities: 0, disposed_sessions: 0 };
    const rec = this.deps.agents.get(agentId);
    if (!rec) return { agent_id: agentId, deleted: false, ...counts };
    counts.disposed_sessions = await this.disposeSessions(agentId);
    for (const step of this.deleteSteps) {
      const r = await step(agentId);
      if (r) for (const [k, v] of Object.entries(r)) counts[k] = (counts[k] ?? 0) + v;
    }
    rmSync(join(this.deps.info.dataDir, 'agents', agentId, 'state'), { recursive: true, force: true });
    await this.deps.agents.remove(agentId);
    const e = this.agents.get(agentId);
    e?.actor.send({ type: 'agent.delete' });
    this.agents.delete(agentId);
    return { agent_id: agentId, deleted: true, ...counts };
  }

  private async disposeSessions(agentId: string): Promise<number> {
    const e = this.agents.get(agentId);
    if (!e) return 0;
    let n = 0;
    for (const [topic, t] of e.topics) {
      await t.closeSession(this.deps.clock.now());
      n++;
      if (t.quiet) {
        t.stop();
        e.topics.delete(topic);
      }
    }
    return n;
  }

  /** The topic actor of (agent, topic), created on first touch. */
  topic(agentId: string, ref: TopicRef): { actor: TopicActor; created: boolean } {
    const rec = this.deps.agents.get(agentId);
    if (!rec) throw new Error(`unknown agent ${agentId}`);
    const e = this.entry(rec);
    let actor = e.topics.get(ref.topic);
    if (actor) return { actor, created: false };
    actor = new TopicActor(agentId, ref, {
      factory: this.factory, clock: this.deps.clock,
      run: (session, cmd, signal) => this.runCommand(session, cmd, signal),
      maxWaiting: this.deps.queue?.max ?? QUEUE_MAX, waitMs: this.deps.queue?.waitMs ?? QUEUE_WAIT_MS,
    });
    e.topics.set(ref.topic, actor);
    return { actor, created: true };
  }

  /** Submit a command to a topic (spec §4.7 `queue`; spec §4.8 `try` for MCP). */
  submit(agentId: string, ref: TopicRef, cmd: string, sink: ExecSink, policy: 'queue' | 'try'): { leave(): void } {
    const { actor } = this.topic(agentId, ref);
    const id = actor.submit(cmd, sink, policy);
    return { leave: () => actor.leave(id) };
  }

  /** DELETE /sessions/{agent_id}/{topic}: false when absent (spec §4.6). */
  async closeSession(agentId: string, topic: string): Promise<boolean> {
    const e = this.agents.get(agentId);
    const t = e?.topics.get(topic);
    if (!e || !t) return false;
    await t.closeSession(this.deps.clock.now());
    if (t.quiet) {
      t.stop();
      e.topics.delete(topic);
    }
    return true;
  }

  /** Run one command text in a session: the command path of /exec and /mcp. Never throws. */
  async runCommand(session: SessionState, cmd: string, signal: AbortSignal): Promise<ExecResult> {
    const wrap = (r: CommandResult): ExecResult => ({ ...r, meta: sessionMeta(session), topic: session.ref.topic, topicType: session.ref.type });
    const agent = this.deps.agents.get(session.agentId);
    if (!agent) return wrap(fail('CONFLICT', `Agent ${session.agentId} was deleted while this command waited`));
    try {
      const p = parseCommand(cmd);
      return wrap(await this.deps.registry.run({ agent, session, services: this.services, signal, ...p }));
    } catch (err) {
      return wrap(fail('INTERNAL_ERROR', `Internal error: ${errorMessage(err)}`));
    }
  }

  /** Topics of an agent with queue state, sorted by topic. */
  topicStatuses(agentId: string): TopicStatus[] {
    const e = this.agents.get(agentId);
    if (!e) return [];
    return [...e.topics.values()]
      .map((t) => ({ session: t.session, executing: t.executing, queueLength: t.queueLength }))
      .sort((a, b) => (a.session.ref.topic < b.session.ref.topic ? -1 : a.session.ref.topic > b.session.ref.topic ? 1 : 0));
  }

  /** Agent ids that have topics (for GET /sessions without a filter). */
  agentIdsWithTopics(): string[] {
    return [...this.agents.keys()].sort();
  }

  /** GET /health counts: sessions = active topics across all agents. */
  counts(): { agents: number; sessions: number } {
    let sessions = 0;
    for (const e of this.agents.values()) sessions += e.topics.size;
    return { agents: this.deps.agents.list().length, sessions };
  }

  /** Shutdown (behaviour.md §1.1): feature hooks (end streams), sessions, child process groups. */
  async shutdown(): Promise<void> {
    for (const h of this.shutdownHooks) {
      try { await h(); } catch (err) { process.emitWarning(`shutdown hook failed: ${errorMessage(err)}`); }
    }
    for (const id of [...this.agents.keys()]) await this.disposeSessions(id);
    killAll('SIGKILL');
  }
}
