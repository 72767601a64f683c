import type { DenialBoard } from './denials.js';
import type { AgentProfile } from './ports.js';
import type { SandboxMode, SandboxSupport } from './sandbox.js';
import type { SessionState } from './session.js';
import type { WireName } from './wire.js';

/**
 * What the services behind commands (shells, installs, the inspection) are given: daemon facts, a
 * topic's status, and the part of a command's context they read. Commands' own types
 * (commands/types.ts) re-export these, so services need nothing from src/commands.
 */

/** The caller of a service: the command's session, agent, signal and request id. */
export interface CommandCaller {
  session: Pick<SessionState, 'agentId' | 'ref'>;
  agent: Pick<AgentProfile, 'id' | 'home'>;
  /** Aborted when the session ends (DELETE /sessions, agent deletion). */
  signal: AbortSignal;
  requestId?: string | null;
}

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
