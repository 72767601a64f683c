import type { AgentRecord, AgentStore, Clock, EnvStore, PackageRegistry } from '../domain/ports.js';
import type { CommandResult } from '../domain/result.js';
import type { SessionState } from '../domain/session.js';

/** Daemon facts that commands print (system hub, /webhook URLs). */
export interface DaemonInfo {
  version: string;
  role: string;
  label: string;
  wire: 'agent' | 'user';
  startedAt: number;
  /** The bound port (known after listen). */
  port(): number;
  /** The data directory. */
  dataDir: string;
}

/** One topic of an agent as /topics and the hubs show it (behaviour.md §2.11). */
export interface TopicStatus {
  session: SessionState;
  executing: boolean;
  queueLength: number;
}

/** Public capability summary for the agent hub (behaviour.md §2.12; filled by the capabilities issue). */
export interface CapabilitySummary {
  token_id: string;
  path_prefix: string;
  verbs: string[];
  state: string;
  expires_at: string;
}

/**
 * What commands may reach. Optional members are filled by later features; commands that print
 * them show an empty state until then.
 */
export interface Services {
  info: DaemonInfo;
  clock: Clock;
  agents: AgentStore;
  env: EnvStore;
  packages: PackageRegistry;
  /** Topics of one agent (sorted by topic), and global counts. */
  topics(agentId: string): TopicStatus[];
  counts(): { agents: number; sessions: number };
  /** Webhook URL of an agent, or null (issue 4 fills creation and rotation). */
  webhookUrl(agent: AgentRecord): string | null;
  capabilities?: { listForAgent(agentId: string): CapabilitySummary[] };
  /** Extra feature services keyed by name (events, webhooks, documents, …). */
  ext: Map<string, unknown>;
}

/** Everything a running command gets (behaviour.md §2.1 terms). */
export interface CommandContext {
  agent: AgentRecord;
  session: SessionState;
  services: Services;
  /** The command word, lower-cased, without its dotted part. */
  word: string;
  /** The part after the first dot of the word (`act.<id>` → `<id>`), or null. */
  sub: string | null;
  /** The header after the word, leading whitespace removed. */
  args: string;
  /** Text after the first line (`\r\n` normalised), possibly empty. */
  body: string;
  /** The first line of cmd, trimmed. */
  header: string;
  /** Aborted when the topic is closed while the command runs (behaviour.md §1.3). */
  signal: AbortSignal;
}

/** A slash command (architecture.md: `{name, run(ctx, args) -> CommandResult}`). */
export interface Command {
  /** The command word without `/`. */
  name: string;
  /** behaviour.md §2.1 item 7: only these accept a body. */
  takesBody?: boolean;
  run(ctx: CommandContext): Promise<CommandResult> | CommandResult;
}

/**
 * A fallback resolver for words that are not built-in commands (behaviour.md §2.1 item 5:
 * actions of the current document). Returns null when it does not handle the word.
 */
export type CommandFallback = (ctx: CommandContext) => Promise<CommandResult | null> | CommandResult | null;
