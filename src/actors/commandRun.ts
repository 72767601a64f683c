import { parseCommand, type CommandRegistry, type ParsedCommand } from '../commands/registry.js';
import type { CommandContext, Services } from '../commands/types.js';
import type { AgentProfile } from '../domain/ports.js';
import { errorMessage } from '../domain/errors.js';
import type { AgentDirectory } from './directory.js';
import { fail, type CommandResult, type DocMeta } from '../domain/result.js';
import { SessionDraft, sessionMeta, type SessionChange, type SessionEvent, type SessionState } from '../domain/session.js';
import type { SessionSignals } from './sessionSignals.js';
import type { CommandEvent, HeadMeta, Ticket, TicketOutcome } from '../domain/ticket.js';
import type { TopicActor } from './tree.js';

/**
 * Run one ticket's command in a session: the one command path of /exec and /mcp (architecture.md
 * "one request, end to end"). Parses the text (behaviour.md §2.1), runs the command on a draft of the
 * session with the session's abort signal, and reports the document meta after the command and what
 * it changed. Never throws: a bug in a command is an INTERNAL_ERROR result.
 */
export async function runTicket(deps: { directory: AgentDirectory; registry: CommandRegistry; services: Services; signals: SessionSignals }, session: SessionState, ticket: Ticket): Promise<TicketOutcome> {
  const draft = new SessionDraft(session);
  const agent = deps.directory.profile(session.agentId);
  let r: CommandResult;
  if (!agent) r = fail('CONFLICT', `Agent ${session.agentId} was deleted while this command waited`);
  else {
    try {
      r = await deps.registry.run(new TicketContext(agent, draft, deps.services, deps.signals.signal(session.id), ticket.requestId, parseCommand(ticket.cmd)));
    } catch (err) {
      r = fail('INTERNAL_ERROR', `Internal error: ${errorMessage(err)}`);
    }
  }
  return {
    result: { ...r, meta: headMeta(sessionMeta(draft.current), r), topic: session.ref.topic, topicType: session.ref.type },
    sessionId: session.id, changes: draft.changes,
  };
}

/** The context of one command: its session read through the draft (a class, so every command's context has one shape). */
class TicketContext implements CommandContext {
  readonly header: string;
  readonly body: string;
  readonly word: string;
  readonly sub: string | null;
  readonly args: string;

  constructor(readonly agent: AgentProfile, private readonly draft: SessionDraft, readonly services: Services, readonly signal: AbortSignal, readonly requestId: string | null, p: ParsedCommand) {
    this.header = p.header;
    this.body = p.body;
    this.word = p.word;
    this.sub = p.sub;
    this.args = p.args;
  }

  get session(): SessionState {
    return this.draft.current;
  }

  change(c: SessionChange): void {
    this.draft.change(c);
  }
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
 * inspector, behaviour.md §13.3) sees every one, `observeSession` every `session.*` event; `ended`
 * runs when the topic ends. Returns the callers by ticket id: submit adds one, a caller that leaves
 * removes itself.
 */
export function followTopic(actor: TopicActor, observe: (ev: CommandEvent) => void, ended: () => void, observeSession: (ev: SessionEvent) => void = () => undefined): Map<string, TicketListener> {
  const listeners = new Map<string, TicketListener>();
  actor.on('*', (ev) => {
    if (!('ticket' in ev)) {
      observeSession(ev);
      return;
    }
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

/** head.meta: the document, and what the sandbox refused when it refused something (behaviour.md §15.5). */
function headMeta(doc: DocMeta | null, r: CommandResult): HeadMeta | null {
  if (!r.sandbox) return doc;
  return { ...(doc ?? {}), sandbox: r.sandbox };
}
