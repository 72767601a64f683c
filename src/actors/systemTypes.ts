import type { CommandRegistry } from '../commands/registry.js';
import type { DaemonInfo } from '../commands/types.js';
import type { AgentStore, Clock, EnvStore, PackageRegistry } from '../domain/ports.js';
import type { NetworkPolicy } from '../domain/networkPolicy.js';
import type { SandboxMode } from '../domain/sandbox.js';
import type { QueueLimits, TicketRequest } from '../domain/ticket.js';
import type { TopicRef as TopicName } from '../domain/topic.js';

/** What `LoomSystem` is built from, what it is asked and what it answers (actors/system.ts). */

/** The stores and settings the system is composed from (daemon.ts). */
export interface SystemDeps {
  info: DaemonInfo;
  clock: Clock;
  agents: AgentStore;
  env: EnvStore;
  packages: PackageRegistry;
  registry: CommandRegistry;
  queue?: QueueLimits;
}

/** A command to submit: its text, request id, channel, and where it goes. */
export interface CommandRequest extends TicketRequest {
  agentId: string;
  ref: TopicName;
}

/** What POST /agents did (spec §4.3); the route names the fields after its wire. */
export interface RegisterOutcome {
  id: string;
  home: string;
  created: boolean;
  /** Fields the features add (webhook_url, capability). */
  extra: Record<string, unknown>;
}

/** What DELETE /agents/{id} did (spec §4.3 rule 3); `counts` holds every count the cascade reports. */
export interface DeleteOutcome {
  id: string;
  deleted: boolean;
  counts: Record<string, number>;
  /** The home deleted with it (`?purge=1`, behaviour.md §17). */
  purgedHome?: string;
}

/** One registered agent as GET /agents lists it (spec §4.3). */
export interface AgentSummary {
  id: string;
  home: string;
  allowedPaths: string[];
  createdAt: string;
  /** behaviour.md §15: the mode its commands run in. */
  sandbox: SandboxMode;
  /** behaviour.md §15.6: `agent` when the agent chose its mode, `default` when it follows the daemon's. */
  sandbox_source: 'agent' | 'default';
  /** behaviour.md §15.2: the network policy its confined programs get. */
  network: NetworkPolicy;
}
