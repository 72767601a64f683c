import { readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TRACE_FILE_STEP_BYTES } from '../domain/limits.js';
import { outcomeResult, outputOutcome, refusedOutcome } from '../domain/mcpTool.js';
import { cmdDisplay, contentBody, contentString, refusalError } from '../domain/output.js';
import type { CommandEvent } from '../domain/ticket.js';
import type { ExecStep, Expect } from '../domain/trace.js';
import { scrub, type ScrubContext } from '../domain/traceText.js';

/** A command's outcome event: what a trace records (behaviour.md §14.1: refusals included). */
export type OutcomeEvent = Extract<CommandEvent, { type: 'command.finished' | 'command.refused' }>;

/**
 * What the client of a command received, as a step's `expect` (behaviour.md §14.2): for /exec the
 * head's compared fields and the content SSE sent, or the status and JSON body of a refusal; for MCP
 * the `tools/call` text and its ok/code/topic. Built with the functions the channels use
 * (`refusalError`, `outcomeResult`), so the trace holds what was sent, not a second rendering.
 */
export function expectOf(ev: OutcomeEvent): Expect {
  if (ev.ticket.via === 'mcp') {
    const outcome = ev.type === 'command.finished' ? outputOutcome(ev.output) : refusedOutcome(ev.topic, ev.reason);
    const text = outcomeResult(outcome).content[0].text;
    return { status: 200, head: { ok: outcome.ok, code: outcome.ok ? null : outcome.code ?? null, topic: outcome.topic }, content: text };
  }
  if (ev.type === 'command.refused') {
    const err = refusalError(ev);
    return { status: err.status, error: err.body() };
  }
  const { head, content } = ev.output;
  return { status: 200, head: { ok: head.ok, code: head.code, topic: head.topic, topic_type: head.topic_type, meta: head.meta }, content };
}

/**
 * The exec step of an outcome, scrubbed (behaviour.md §14.2): the command in its template form, the
 * answer with the `re:` line in that same form (so replay compares it alike), secrets, home and port
 * replaced everywhere.
 */
export function execStep(ev: OutcomeEvent, base: { seq: number; t_ms: number; cmd: string }, ctx: ScrubContext): ExecStep {
  const expect = expectOf(ev);
  const t = ev.ticket;
  if (base.cmd !== t.cmd && expect.content !== undefined && t.via === 'exec') {
    expect.content = contentString(cmdDisplay(base.cmd), t.requestId, contentBody(expect.content));
  }
  if (expect.content !== undefined) expect.content = scrub(expect.content, ctx);
  const meta = expect.head?.meta;
  if (meta && expect.head) expect.head.meta = { ...meta, uri: scrub(meta.uri, ctx) };
  if (expect.error) expect.error = Object.fromEntries(Object.entries(expect.error).map(([k, v]) => [k, typeof v === 'string' ? scrub(v, ctx) : v]));
  const step: ExecStep = { seq: base.seq, t_ms: base.t_ms, kind: 'exec', via: t.via, agent_id: ev.agentId, topic: ev.topic, cmd: scrub(base.cmd, ctx) };
  if (t.requestId !== null) step.request_id = scrub(t.requestId, ctx);
  step.expect = expect;
  step.duration_ms = Math.max(0, ev.at - t.queuedAt);
  return step;
}

/** `--<field>-file <path>` arguments of a command's first line (behaviour.md §5.4), resolved against the home. */
function fieldFiles(cmd: string, home: string): string[] {
  const first = cmd.split('\n', 1)[0];
  if (!first.includes('-file')) return [];
  const out: string[] = [];
  for (const m of first.matchAll(/--[A-Za-z0-9_-]+-file\s+(?:"([^"]*)"|'([^']*)'|(\S+))/g)) {
    const p = m[1] ?? m[2] ?? m[3];
    out.push(p === '~' ? home : p.startsWith('~/') ? join(home, p.slice(2)) : isAbsolute(p) ? p : resolve(home, p));
  }
  return out;
}

/**
 * The local files an outcome used that a replay needs (behaviour.md §14.2 `file` steps): the
 * document it shows (head.meta.uri, `file://`) and `--<field>-file` arguments. Only regular files
 * inside the home, up to TRACE_FILE_STEP_BYTES; the content as it is now (the command has just run).
 */
export function usedFiles(ev: OutcomeEvent, home: string): Array<{ abs: string; path: string; read: () => string | undefined }> {
  const paths: string[] = [];
  const uri = ev.type === 'command.finished' ? ev.result.meta?.uri : undefined;
  if (uri?.startsWith('file://')) {
    try {
      paths.push(fileURLToPath(uri));
    } catch {
      // Not a local file URL after all: nothing to keep.
    }
  }
  paths.push(...fieldFiles(ev.ticket.cmd, home));
  return paths
    .map((abs) => ({ abs, rel: relative(home, abs) }))
    .filter(({ rel }) => rel !== '' && !rel.startsWith('..') && !isAbsolute(rel))
    .map(({ abs, rel }) => ({ abs, path: `~/${rel}`, read: () => readSmallFile(abs) }));
}

function readSmallFile(abs: string): string | undefined {
  try {
    const st = statSync(abs);
    if (!st.isFile() || st.size > TRACE_FILE_STEP_BYTES) return undefined;
    return readFileSync(abs, 'utf8');
  } catch {
    // Gone or unreadable since the command ran: the replay will show the difference.
    return undefined;
  }
}
