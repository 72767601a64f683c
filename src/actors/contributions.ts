import type { AnyStateMachine } from 'xstate';
import type { Command, CommandFallback, FeatureServices, HubPage } from '../commands/types.js';
import type { AgentInput } from '../domain/agentInput.js';
import type { AgentRecord } from '../domain/ports.js';
import type { SessionState } from '../domain/session.js';
import type { HubName } from '../domain/topic.js';
import type { FeatureActors } from './tree.js';

/** A feature's part in POST /agents (capability pairing, webhook creation). */
export interface RegistrationExtension {
  /** Throw a LoomError to refuse before anything changes (spec §4.3 rule 2). */
  validate?(input: AgentInput): void;
  /** After the agent is stored: extra response fields. */
  apply?(agent: AgentRecord, input: AgentInput): Promise<Record<string, unknown>> | Record<string, unknown>;
}

/** Counts a DELETE /agents step adds to the response (spec §4.3 rule 3). */
export type DeleteStepCounts = Record<string, number>;

/**
 * What a feature contributes to the running system (architecture.md "features plug in"): typed,
 * declared once at start-up, read by the system where it needs them — never a key-value bag or a
 * hook array reached into from outside.
 */
export interface SystemContribution {
  /** Slash commands (registered in the command registry). */
  commands?: Command[];
  /** Resolvers for words that are not built-in commands (behaviour.md §2.1 item 5). */
  fallbacks?: CommandFallback[];
  /** Hub pages (behaviour.md §2.12). */
  hubs?: Partial<Record<HubName, HubPage>>;
  /** Typed services built-in commands reach (documents, actions, events, bash, capabilities). */
  services?: FeatureServices;
  /** `/describe` capabilities entries (behaviour.md §9.3). */
  describe?: Record<string, unknown>;
  /** POST /agents: validation before any change, extra response fields after. */
  onRegister?: RegistrationExtension;
  /**
   * DELETE /agents/{id}, after the agent's actors have been told (topics answered, capabilities
   * revoked): the feature's own I/O (inbox, streams). Returns counts to add to the response.
   */
  onDelete?(agentId: string): Promise<DeleteStepCounts | void> | DeleteStepCounts | void;
  /**
   * The state inspector's agent fields (behaviour.md §13.2: `events`, `capabilities`): public values
   * only, never a secret, token, value or text (§13.4).
   */
  inspectAgent?(agentId: string): Record<string, unknown>;
  /** Machines of the feature's actors, for GET /inspect/machines (install, shell). */
  machines?: AnyStateMachine[];
  /** What the feature's actors run (install work, capability archive, webhook-token storage), given to the tree at construction. */
  actors?: FeatureActors;
  /**
   * A session ended (DELETE /sessions, a home change, the agent deleted: behaviour.md §1.3): what the
   * feature keeps outside the session for it (undo copies) goes. Synchronous: it runs in the topic's step.
   */
  onSessionEnd?(session: SessionState): void;
  /** Start-up work once the tree runs (actors of stored records). */
  onStart?(): void | Promise<void>;
  /** Daemon shutdown (behaviour.md §1.1): end streams, close logs. */
  onShutdown?(): void | Promise<void>;
}

/**
 * The contributions the features made, and every question the system asks of all of them at once
 * (architecture.md "features plug in"): the system holds one of these instead of looping over a
 * list in each of its methods.
 */
export class FeatureSet {
  private readonly all: SystemContribution[] = [];

  /** Take one contribution (start-up only); the system registers its commands and hubs. */
  add(c: SystemContribution): void {
    this.all.push(c);
  }

  /** The services every feature gave, merged once (commands reach them through the context). */
  services(): FeatureServices {
    return Object.assign({}, ...this.all.map((c) => c.services ?? {})) as FeatureServices;
  }

  /** What the features give the machines of the tree. */
  actors(): FeatureActors {
    return Object.assign({}, ...this.all.map((c) => c.actors ?? {})) as FeatureActors;
  }

  /** Every feature's start-up step, in order, once the tree runs. */
  async start(): Promise<void> {
    for (const c of this.all) await c.onStart?.();
  }

  /** `/describe` entries of every feature, over `core` (read at each call: a feature may answer lazily). */
  describe(core: Record<string, unknown>): Record<string, unknown> {
    for (const c of this.all) Object.assign(core, c.describe ?? {});
    return core;
  }

  /** The state inspector's agent fields of every feature (behaviour.md §13.2). */
  inspectAgent(agentId: string): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const c of this.all) Object.assign(out, c.inspectAgent?.(agentId) ?? {});
    return out;
  }

  /** The machines the features' actors run. */
  machines(): AnyStateMachine[] {
    return this.all.flatMap((c) => c.machines ?? []);
  }

  /** POST /agents, before any change: every feature may refuse (throws its LoomError). */
  validateRegistration(input: AgentInput): void {
    for (const c of this.all) c.onRegister?.validate?.(input);
  }

  /** POST /agents, after the agent is stored: the features' extra response fields, in order. */
  async applyRegistration(agent: () => AgentRecord, input: AgentInput): Promise<Record<string, unknown>> {
    const extra: Record<string, unknown> = {};
    for (const c of this.all) Object.assign(extra, await c.onRegister?.apply?.(agent(), input));
    return extra;
  }

  /** DELETE /agents/{id}: every feature's own step, its counts added to `counts`. */
  async deleteSteps(agentId: string, counts: Record<string, number>): Promise<Record<string, number>> {
    const total = { ...counts };
    for (const c of this.all) {
      const r = await c.onDelete?.(agentId);
      if (r) for (const [k, v] of Object.entries(r)) total[k] = (total[k] ?? 0) + v;
    }
    return total;
  }

  /** A session ended: every feature's step for it. */
  sessionEnded(session: SessionState): void {
    for (const c of this.all) c.onSessionEnd?.(session);
  }

  /** Shutdown hooks of every feature; one that fails is reported and the others still run. */
  async shutdown(warn: (what: string, err: unknown) => void): Promise<void> {
    for (const c of this.all) {
      try { await c.onShutdown?.(); } catch (err) { warn('shutdown hook failed', err); }
    }
  }
}
