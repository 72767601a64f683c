import { LoomError } from './errors.js';
import { CMD_DISPLAY_CHARS, REQUEST_ID_MAX } from './limits.js';
import type { CommandEvent, ExecOutput, ExecResult, Ticket } from './ticket.js';

/** behaviour.md §1.5: the first line of cmd, cut to 199 characters + `…` past 200. */
export function cmdDisplay(cmd: string): string {
  return cutLine(firstLine(cmd));
}

/** The first line of cmd, trimmed, not yet cut (what cmdDisplay cuts). */
export function firstLine(cmd: string): string {
  const nl = cmd.indexOf('\n');
  return (nl < 0 ? cmd : cmd.slice(0, nl)).replace(/\r$/, '').trim();
}

/** A line cut as cmdDisplay cuts: 199 characters + `…` past 200. */
export function cutLine(line: string): string {
  if (line.length <= CMD_DISPLAY_CHARS) return line;
  const chars = [...line];
  return chars.length > CMD_DISPLAY_CHARS ? chars.slice(0, CMD_DISPLAY_CHARS - 1).join('') + '…' : line;
}

/** The content string of spec §4.7: `re: [<request_id>] <cmd>` then the body. */
export function contentString(display: string, requestId: string | null, body: string): string {
  return `re: ${requestId !== null ? `[${requestId}] ` : ''}${display}\n${body}`;
}

/** The body of a content string: everything after its `re:` line (what the MCP envelope shows, behaviour.md §10.2). */
export function contentBody(content: string): string {
  return content.slice(content.indexOf('\n') + 1);
}

/**
 * The one function that turns a command result into what the channel sends (spec §2 head, §4.7
 * content). SSE writes both; the MCP envelope shows the content without its `re:` line; the
 * trace recorder stores both.
 */
export function commandOutput(agentId: string, ticket: Ticket, result: ExecResult): ExecOutput {
  const display = cmdDisplay(ticket.cmd);
  return {
    head: {
      ok: result.ok, code: result.code, cmd: display, request_id: ticket.requestId, agent_id: agentId,
      topic: result.topic, topic_type: result.topicType, meta: result.meta,
    },
    content: contentString(display, ticket.requestId, result.body),
  };
}

/** Validate request_id (behaviour.md §1.2): optional string 1–256 chars; `""` counts as absent. */
export function parseRequestId(v: unknown): string | null {
  if (v === undefined || v === null || v === '') return null;
  if (typeof v !== 'string' || [...v].length > REQUEST_ID_MAX) throw new LoomError(400, 'Invalid request_id');
  return v;
}

/** The HTTP refusal of a queued /exec (spec §3 rows 3–4; bodies of behaviour.md §9.4). */
export function refusalError(ev: Extract<CommandEvent, { type: 'command.refused' }>): LoomError {
  switch (ev.reason) {
    case 'QUEUE_FULL':
      return new LoomError(429, 'QUEUE_FULL', { message: `Topic ${ev.topic} already has ${ev.limits.max} commands waiting.` });
    case 'QUEUE_TIMEOUT':
      return new LoomError(504, 'QUEUE_TIMEOUT', { message: `Waited ${ev.limits.waitMs} ms in the queue of topic ${ev.topic}.` });
    default:
      // /exec always queues; BUSY belongs to MCP (behaviour.md §10.3). Reaching this is a bug.
      return new LoomError(500, `Internal error: /exec refused with ${ev.reason}`);
  }
}
