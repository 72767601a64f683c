import type { SseEvent } from './sse.js';
import type { ExecHead as DomainExecHead } from '../domain/ticket.js';

/**
 * spec §2 head as the client reads it: the domain's head; the user wire sends `user_id` in place of
 * `agent_id` (behaviour.md §11).
 */
export interface ExecHead extends DomainExecHead {
  user_id?: string;
}

/** The outcome of one /exec call as a client sees it. */
export interface ExecOutcome {
  status: number;
  /** JSON error body for non-200 answers. */
  error?: { error: string; message?: string };
  head?: ExecHead;
  content?: string;
  done: boolean;
  /** The content without its `re:` line (what the CLI and MCP print). */
  body?: string;
  /** Client-side code when head arrived without content or done (spec §7). */
  incomplete?: 'STREAM_INCOMPLETE';
}

/** Strip the `re:` line of a content string (spec §4.7). */
export function stripReLine(content: string): string {
  const i = content.indexOf('\n');
  return i < 0 ? '' : content.slice(i + 1);
}

/** The outcome of an /exec refusal (not 200): its JSON error body, or the raw text when it is not JSON. */
export function refusedOutcome(status: number, text: string): ExecOutcome {
  let error: { error: string; message?: string };
  try { error = JSON.parse(text) as { error: string; message?: string }; } catch { error = { error: text }; }
  return { status, error, done: false };
}

/**
 * The outcome of a 200 /exec answer from its SSE events (spec §4.7): head, content and done; an
 * answer without content or done is STREAM_INCOMPLETE (spec §7). Shared by the client and
 * the replay's node:http transport, so both read an answer the same way.
 */
export function streamedOutcome(events: SseEvent[]): ExecOutcome {
  const out: ExecOutcome = { status: 200, done: events.some((e) => e.event === 'done') };
  const head = events.find((e) => e.event === 'head');
  const content = events.find((e) => e.event === 'content');
  if (head) out.head = JSON.parse(head.data) as ExecHead;
  if (content) {
    out.content = JSON.parse(content.data) as string;
    out.body = stripReLine(out.content);
  }
  if (!out.content || !out.done) out.incomplete = 'STREAM_INCOMPLETE';
  return out;
}
