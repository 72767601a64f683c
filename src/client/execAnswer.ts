import type { SseEvent } from './sse.js';
import type { ExecHead, ExecOutcome } from './index.js';

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
 * answer without content or done is STREAM_INCOMPLETE (spec §7). Shared by the fetch client and
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
