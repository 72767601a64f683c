import type { SessionChange } from './session.js';
import type { CommandResult, DocMeta } from './result.js';
import type { SandboxMeta } from './denials.js';

/** How a command reached its topic (behaviour.md §13.2 `via`). */
export type Via = 'exec' | 'mcp';

/**
 * One command in a topic's queue (spec §3): what the topic machine holds for it while it waits or
 * runs. `cmd` is the command text as it runs (trimmed); times are ms since the epoch.
 */
export interface Ticket {
  /** `t<n>`, counted per topic. */
  id: string;
  cmd: string;
  requestId: string | null;
  via: Via;
  queuedAt: number;
  /** When it left the queue and started; null while it waits. */
  startedAt: number | null;
}

/** What a caller hands in for a new ticket (the topic gives it its id). */
export type TicketRequest = Pick<Ticket, 'cmd' | 'requestId' | 'via'>;

/** Why a ticket is refused without running (spec §3 rows 3–4; behaviour.md §10.2 BUSY). */
export type RefusalReason = 'QUEUE_FULL' | 'QUEUE_TIMEOUT' | 'BUSY';

/** The queue limits a refusal cites (spec §3, behaviour.md §9.4 bodies). */
export interface QueueLimits {
  max: number;
  waitMs: number;
}

/** The result of one command as the channel reports it (spec §2 head, §4.7 content). */
export interface ExecResult extends CommandResult {
  meta: HeadMeta | null;
  topic: string;
  topicType: string;
}

/** spec §2 `head` of an /exec answer. */
export interface ExecHead {
  ok: boolean;
  code: string | null;
  cmd: string;
  request_id: string | null;
  agent_id: string;
  topic: string;
  topic_type: string;
  meta: HeadMeta | null;
}

/** spec §2 head.meta: the topic's document; with `sandbox` when a confined command was refused something (behaviour.md §15.5). */
export type HeadMeta = DocMeta | (Partial<DocMeta> & { sandbox: SandboxMeta });

/** What a finished command sends: the head and the content string (spec §4.7). */
export interface ExecOutput {
  head: ExecHead;
  content: string;
}

interface CommandEventBase {
  agentId: string;
  /** Canonical topic. */
  topic: string;
  ticket: Ticket;
  /** When it happened, ms since the epoch. */
  at: number;
}

/**
 * The typed events a topic actor emits (architecture.md "actors emit, HTTP listens"): the /exec
 * SSE stream, the MCP tool, the trace recorder and the inspector all consume these with `actor.on`.
 */
export type CommandEvent =
  | (CommandEventBase & { type: 'command.queued' })
  | (CommandEventBase & { type: 'command.started' })
  | (CommandEventBase & { type: 'command.refused'; reason: RefusalReason; limits: QueueLimits })
  | (CommandEventBase & { type: 'command.finished'; result: ExecResult; output: ExecOutput });

/** What a command run gives its topic: the answer, and the session changes to apply in order. */
export interface TicketOutcome {
  result: ExecResult;
  /** The session the changes belong to (a session renewed meanwhile drops them). */
  sessionId: number;
  changes: readonly SessionChange[];
}
