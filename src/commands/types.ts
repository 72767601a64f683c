import type { EventsPort } from '../domain/events.js';
import type { InstallOutcome, InstallRequest } from '../domain/install.js';
import type { AgentProfile, Clock, EnvStore, PackageRecord, PackageRegistry } from '../domain/ports.js';
import type { CommandResult } from '../domain/result.js';
import type { ConfinePlan, SandboxMode, SandboxSupport } from '../domain/sandbox.js';
import type { DenialBoard } from '../domain/denials.js';
import type { SessionChange, SessionState } from '../domain/session.js';
import type { ShellRunOutcome } from '../domain/shell.js';
import type { HubName } from '../domain/topic.js';
import type { WireName } from '../domain/wire.js';
import type { ActionDoc } from '../sfmd/types.js';

/** Daemon facts that commands print (system hub, /webhook URLs). */
export interface DaemonInfo {
  version: string;
  role: string;
  label: string;
  /** The wire this daemon serves (behaviour.md §11); its description is `WIRES[wire]`. */
  wire: WireName;
  startedAt: number;
  /** The bound port (known after listen). */
  port(): number;
  /** The data directory. */
  dataDir: string;
  /** The sandbox mode of agents registered without one (behaviour.md §15); `none` when absent. */
  sandbox?: SandboxMode;
  /** What this machine can confine with (behaviour.md §15 `/describe`); absent: nothing. */
  sandboxSupport?: () => SandboxSupport;
  /** Each native part, loaded from where or missing why (behaviour.md §17 `/describe`); absent: not reported. */
  nativeParts?: () => Record<string, { loaded: true; source: string } | { loaded: false; reason: string }>;
  /** The egress proxy (behaviour.md §15.2): its port and an agent's proxy address; null before it listens. */
  egress?: () => { port: number; url(agentId: string): string } | null;
  /** What the sandbox refused, per agent and per running command (behaviour.md §15.5). */
  denials?: DenialBoard;
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

/** behaviour.md §3.1 origin of a document. */
export type DocOrigin = 'local' | 'web' | 'manifest';

/** A loaded document as the actions side needs it. */
export interface LoadedDocument {
  doc: ActionDoc;
  origin: DocOrigin;
  /** Absolute URI (meta.uri). */
  uri: string;
  /** Display (behaviour.md §1.4). */
  display: string;
  /** Local documents: absolute file path. */
  path?: string;
  /** Folder CLI actions run in: the document's folder, or the package folder (behaviour.md §4.8). */
  dir?: string;
  /** Installed package name when the document belongs to one (for `app:<name>` scopes, /uninstall). */
  packageName?: string;
  /** Local file of `[!requirements]` for `Setup: /open <path>` lines, if any. */
  requirements?: string;
}

/** A hub page renderer: the lines after `<Name> hub` / `---` (behaviour.md §2.12). */
export type HubPage = (ctx: CommandContext) => string[] | Promise<string[]>;

/** What the documents feature provides to built-in commands. */
export interface DocumentServices {
  /** `/info` lines `document:` … `warnings:` for a session with a document. */
  info(ctx: CommandContext): string[];
  /** `/help` usage lines of the current document's actions (behaviour.md §2.4). */
  usage(ctx: CommandContext): string[];
  /** Fetch limits of remote documents (behaviour.md §3.3). */
  config: { fetchTimeoutMs: number; maxBytes: number; maxRedirects: number };
}

/** What the actions feature provides to the documents feature (docContract.ts). */
export interface ActionServices {
  /** Invoke action `id` with argument text `args` (behaviour.md §5). */
  invoke(ctx: CommandContext, loaded: LoadedDocument, id: string, args: string): Promise<CommandResult>;
  /** Run the `default:` action after /open, /refresh, /back (behaviour.md §4.13); the part after the rule. */
  runDefault(ctx: CommandContext, loaded: LoadedDocument): Promise<CommandResult>;
}

/** What the persistent-shell feature provides (bash topics, behaviour.md §8.3). */
export interface BashServices {
  /** State text of a bash topic for /topics (`shell alive · cwd <dir>` or `no shell`, behaviour.md §2.11). */
  state(t: TopicStatus): string;
  /** The bash hub's text for a topic (§2.12): the state text with the pid and the last command. */
  hubState(t: TopicStatus): string;
  /** End the shell of a bash topic (/close); true when one was running. */
  closeShell(ctx: CommandContext): boolean | Promise<boolean>;
  /** Run shell text in the topic's persistent shell, starting one with `env()` when it has none (built only then). */
  run(ctx: CommandContext, req: { text: string; timeoutMs: number; env: () => NodeJS.ProcessEnv; confine?: ConfinePlan }): Promise<ShellRunOutcome>;
}

/** What the install feature provides to `/install` and `/uninstall` (behaviour.md §7). */
export interface InstallServices {
  /** Run an install (one `install:<id>` actor) to its end; `source` is the text the user gave. */
  install(ctx: CommandContext, req: InstallRequest, source: string): Promise<InstallOutcome>;
  /** Remove a package (behaviour.md §7.7); null when it is not installed. */
  uninstall(ctx: CommandContext, name: string): Promise<{ record: PackageRecord; removed: string | null } | null>;
}

/** The feature-provided members of Services, each typed (features fill them at start-up). */
export interface FeatureServices {
  /** The real package registry replaces the empty one when the install feature is built in. */
  packages?: PackageRegistry;
  installs?: InstallServices;
  documents?: DocumentServices;
  actions?: ActionServices;
  events?: EventsPort;
  bash?: BashServices;
  capabilities?: { listForAgent(agentId: string): CapabilitySummary[] };
}

/**
 * What commands may reach. Feature members are filled by the features of this build; commands
 * that print them show an empty state when a feature is absent.
 */
export interface Services extends FeatureServices {
  info: DaemonInfo;
  clock: Clock;
  env: EnvStore;
  packages: PackageRegistry;
  /** Topics of one agent (sorted by topic), and global counts. */
  topics(agentId: string): TopicStatus[];
  /** Send a change to another topic's session (it applies it like its own commands' changes). */
  changeSession(agentId: string, topic: string, sessionId: number, c: SessionChange): void;
  counts(): { agents: number; sessions: number };
  /** Hub pages by hub name (behaviour.md §2.12): the built-in ones and the features'. */
  hubs: ReadonlyMap<HubName, HubPage>;
}

/** Everything a running command gets (behaviour.md §2.1 terms). */
export interface CommandContext {
  agent: AgentProfile;
  /** The session as this command sees it: its own changes so far included (read-only). */
  readonly session: SessionState;
  /** Record a change of the session; the topic applies it when the command is done (`session.*` events). */
  change(c: SessionChange): void;
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
  /** The request id of the command, when it came with one (install progress carries it). */
  requestId?: string | null;
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
