import { parseCommand, type CommandRegistry, type ParsedCommand } from '../commands/registry.js';
import type { CommandContext, Services } from '../commands/types.js';
import type { AgentProfile } from '../domain/ports.js';
import { errorMessage } from '../domain/errors.js';
import type { AgentDirectory } from './directory.js';
import { fail, type CommandResult, type DocMeta } from '../domain/result.js';
import { SessionDraft, sessionMeta, type SessionChange, type SessionEvent, type SessionState } from '../domain/session.js';
import type { SessionSignals } from './sessionSignals.js';
import type { CommandEvent, ExecResult, HeadMeta, Ticket, TicketOutcome } from '../domain/ticket.js';
import type { TopicActor } from './tree.js';
import { lastTicketId, type NewTicket } from '../machines/topicQueue.js';
import { sendForId } from './ask.js';

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
  return { result: execResult(r, headMeta(sessionMeta(draft.current), r), session), sessionId: session.id, changes: draft.changes };
}

/** A command's result as its topic answers it, field by field (one shape for every command; `sandbox` only when set). */
function execResult(r: CommandResult, meta: HeadMeta | null, session: SessionState): ExecResult {
  const { ok, code, body, sandbox } = r;
  const { topic, type } = session.ref;
  return sandbox ? { ok, code, body, sandbox, meta, topic, topicType: type } : { ok, code, body, meta, topic, topicType: type };
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
 * Hand a ticket to its topic (spec §3): `exec` queues, `mcp` runs only when idle (behaviour.md
 * §10.3). The topic gives the ticket its id as it takes it; what it emitted for the ticket in that
 * step goes to `listener` now, the rest through `listeners` (the map of followTopic) until its outcome.
 */
export function submitTicket(actor: TopicActor, listeners: Map<string, TicketListener>, ticket: NewTicket, listener: TicketListener): Submission {
  const sent = sendForId(actor, { type: ticket.via === 'mcp' ? 'command.try' : 'command.arrive', ticket }, (snap) => lastTicketId(snap.context));
  const ticketId = sent.id;
  let over = false;
  for (const ev of sent.emitted as Array<CommandEvent | SessionEvent>) {
    if (!('ticket' in ev) || ev.ticket.id !== ticketId) continue;
    over ||= ev.type === 'command.finished' || ev.type === 'command.refused';
    guarded(listener, ev);
  }
  if (!over) listeners.set(ticketId, listener);
  return {
    ticketId,
    leave: () => {
      // A running command goes on and its result is discarded (behaviour.md §9.4).
      if (actor.getSnapshot().context.running?.id === ticketId) return;
      actor.send({ type: 'command.leave', ticketId });
      listeners.delete(ticketId);
    },
  };
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
