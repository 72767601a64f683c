import type { AnyStateMachine } from 'xstate';
import type { Command, CommandFallback, FeatureServices, HubPage } from '../commands/types.js';
import type { AgentInput } from '../domain/agentInput.js';
import type { AgentRecord } from '../domain/ports.js';
import type { HubName } from '../domain/topic.js';
import type { InstallEffects } from './tree.js';

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
  /** The work of install actors (the install feature's; spec §3 Package install). */
  installer?: InstallEffects;
  /** Daemon shutdown (behaviour.md §1.1): end streams, close logs. */
  onShutdown?(): void | Promise<void>;
}
