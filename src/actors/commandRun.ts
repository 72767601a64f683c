import { parseCommand, type CommandRegistry } from '../commands/registry.js';
import type { Services } from '../commands/types.js';
import { errorMessage } from '../domain/errors.js';
import type { AgentDirectory } from './directory.js';
import { fail, type CommandResult } from '../domain/result.js';
import { sessionMeta, sessionSignal, type SessionState } from '../domain/session.js';
import type { CommandEvent, ExecResult, Ticket } from '../domain/ticket.js';
import type { TopicActor } from './tree.js';

/**
 * Run one ticket's command in a session: the one command path of /exec and /mcp (architecture.md
 * "one request, end to end"). Parses the text (behaviour.md §2.1), runs the command with the
 * session's abort signal, and reports the document meta after the command. Never throws: a bug in a
 * command is an INTERNAL_ERROR result.
 */
export async function runTicket(deps: { directory: AgentDirectory; registry: CommandRegistry; services: Services }, session: SessionState, ticket: Ticket): Promise<ExecResult> {
  const wrap = (r: CommandResult): ExecResult => ({ ...r, meta: sessionMeta(session), topic: session.ref.topic, topicType: session.ref.type });
  const agent = deps.directory.profile(session.agentId);
  if (!agent) return wrap(fail('CONFLICT', `Agent ${session.agentId} was deleted while this command waited`));
  try {
    const p = parseCommand(ticket.cmd);
    return wrap(await deps.registry.run({ agent, session, services: deps.services, signal: sessionSignal(session), requestId: ticket.requestId, ...p }));
  } catch (err) {
    return wrap(fail('INTERNAL_ERROR', `Internal error: ${errorMessage(err)}`));
  }
}

/** End a session: abort what runs in it (behaviour.md §1.3), then its disposers (shells, …). */
export async function disposeSession(session: SessionState): Promise<void> {
  session.controller?.abort();
  for (const d of session.disposers) await d();
}

/** Listens to one ticket's events, from submission to its outcome. */
export type TicketListener = (ev: CommandEvent) => void;

/** A submitted command, as its caller holds it. */
export interface Submission {
  /** The ticket id (`t<n>`, per topic). */
  readonly ticketId: string;
  /** The client left: a waiting ticket is removed with no response (spec §3); a running one goes on. */
  leave(): void;
}

/**
 * Call a listener without letting it throw into the emitting actor: XState rethrows a listener's
 * error outside the actor, which would stop the daemon.
 */
export function guarded(listener: TicketListener, ev: CommandEvent): void {
  try {
    listener(ev);
  } catch (err) {
    process.emitWarning(`listener of ${ev.type} ${ev.ticket.id} failed: ${errorMessage(err)}`);
  }
}

/**
 * The one subscription of a topic actor (actor.on): each ticket's caller gets its `command.*`
 * events until its outcome (refused or finished), and `observe` (the inspection: trace recorder,
 * inspector, behaviour.md §13.3) sees every one; `ended` runs when the topic ends. Returns the
 * callers by ticket id: submit adds one, a caller that leaves removes itself.
 */
export function followTopic(actor: TopicActor, observe: (ev: CommandEvent) => void, ended: () => void): Map<string, TicketListener> {
  const listeners = new Map<string, TicketListener>();
  actor.on('*', (ev) => {
    const l = listeners.get(ev.ticket.id);
    if (l) {
      if (ev.type === 'command.finished' || ev.type === 'command.refused') listeners.delete(ev.ticket.id);
      guarded(l, ev);
    }
    observe(ev);
  });
  actor.subscribe({ complete: ended, error: ended });
  return listeners;
}
