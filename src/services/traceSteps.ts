import { realpathSync } from 'node:fs';
import { isFileRefusal } from '../domain/agentFile.js';
import { readAgentFile } from '../effects/agentFile.js';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TRACE_FILE_STEP_BYTES } from '../domain/limits.js';
import { outcomeResult, outputOutcome, refusedOutcome } from '../domain/mcpTool.js';
import { cmdDisplay, contentBody, contentString, refusalError } from '../domain/output.js';
import type { CommandEvent } from '../domain/ticket.js';
import type { SessionEvent } from '../domain/session.js';
import type { ExecStep, Expect, TraceSessionChange } from '../domain/trace.js';
import { scrub, type ScrubContext, type ScrubMemo } from '../domain/traceText.js';
import { isInside } from '../effects/workspace.js';

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
 * What a recorder keeps of an outcome until its step is written: the ticket, where and when, and
 * what the client received. Taken when the command finishes, so the result, its output and the
 * event itself are not held for the up to TRACE_FLUSH_MS until the next flush (at thousands of
 * commands a second, holding them would make them survive young-generation collections).
 */
export interface ExecRecord {
  agentId: string;
  topic: string;
  at: number;
  ticket: Pick<OutcomeEvent['ticket'], 'id' | 'via' | 'requestId' | 'cmd' | 'queuedAt' | 'startedAt'>;
  expect: Expect;
  /** What the command changed in its session (as its topic emitted it), not yet scrubbed. */
  session?: TraceSessionChange[];
}

/** The {@link ExecRecord} of an outcome. */
export function execRecord(ev: OutcomeEvent): ExecRecord {
  const { id, via, requestId, cmd, queuedAt, startedAt } = ev.ticket;
  return { agentId: ev.agentId, topic: ev.topic, at: ev.at, ticket: { id, via, requestId, cmd, queuedAt, startedAt }, expect: expectOf(ev) };
}

/**
 * A session change as a trace keeps it (behaviour.md §14.2, version 2): the changes the topic's
 * history shows (§13.7), variables by name only; null for the others (base folder, shortcuts, read
 * and undo records, action responses), which the inspector does not show either.
 */
export function traceSessionChange(ev: SessionEvent): TraceSessionChange | null {
  switch (ev.type) {
    case 'session.opened':
      return { type: ev.type, uri: ev.doc.uri, title: ev.doc.title, ...(ev.pop ? { back: true as const } : {}) };
    case 'session.navigated':
      return { type: ev.type, block: ev.block };
    case 'session.closed':
      return { type: ev.type };
    case 'session.set':
      return { type: ev.type, names: ev.values.map(([name]) => name) };
    case 'session.cleared':
      return { type: ev.type, names: [...ev.names] };
    default:
      return null;
  }
}

/** A recorded session change with its document address, title and block scrubbed like the answer's meta. */
function scrubChange(c: TraceSessionChange, ctx: ScrubContext): TraceSessionChange {
  if (c.type === 'session.opened') return { ...c, uri: scrub(c.uri, ctx), title: c.title === null ? null : scrub(c.title, ctx) };
  if (c.type === 'session.navigated' && c.block !== null) return { ...c, block: scrub(c.block, ctx) };
  return c;
}

/**
 * The exec step of an outcome, scrubbed (behaviour.md §14.2): the command in its template form, the
 * answer with the `re:` line in that same form (so replay compares it alike), secrets, home and port
 * replaced everywhere.
 */
export function execStep(rec: ExecRecord, base: { seq: number; t_ms: number; cmd: string }, ctx: ScrubContext, memo?: ScrubMemo): ExecStep {
  const expect = rec.expect;
  const t = rec.ticket;
  if (base.cmd !== t.cmd && expect.content !== undefined && t.via === 'exec') {
    expect.content = contentString(cmdDisplay(base.cmd), t.requestId, contentBody(expect.content));
  }
  if (expect.content !== undefined) expect.content = memo ? memo.scrub(expect.content, ctx) : scrub(expect.content, ctx);
  const meta = expect.head?.meta;
  // The title is document text: a secret in it is kept out like one in the content.
  const text = (v: string | null | undefined) => (typeof v === 'string' ? scrub(v, ctx) : v);
  if (meta && expect.head) expect.head.meta = { ...meta, ...(meta.uri !== undefined ? { uri: scrub(meta.uri, ctx) } : {}), ...(meta.title !== undefined ? { title: text(meta.title) ?? null } : {}), ...(meta.current_block !== undefined ? { current_block: text(meta.current_block) ?? null } : {}) } as typeof meta;
  if (expect.error) expect.error = Object.fromEntries(Object.entries(expect.error).map(([k, v]) => [k, typeof v === 'string' ? scrub(v, ctx) : v]));
  const step: ExecStep = { seq: base.seq, t_ms: base.t_ms, kind: 'exec', via: t.via, agent_id: rec.agentId, topic: rec.topic, cmd: scrub(base.cmd, ctx) };
  if (t.requestId !== null) step.request_id = scrub(t.requestId, ctx);
  if (rec.session) step.session = rec.session.map((c) => scrubChange(c, ctx));
  step.expect = expect;
  step.duration_ms = Math.max(0, rec.at - t.queuedAt);
  // Version 2: when it left the queue, and its ticket (after the answer: StepLines keeps what comes before).
  if (t.startedAt !== null) step.queued_ms = Math.max(0, t.startedAt - t.queuedAt);
  step.ticket = t.id;
  return step;
}

/** A path as a command wrote it, resolved against the home: `~`, `~/…`, absolute, or (for --x-file) relative. */
function resolvePath(p: string, home: string, relativeOk: boolean): string | undefined {
  if (p === '~') return home;
  if (p.startsWith('~/')) return join(home, p.slice(2));
  if (isAbsolute(p)) return p;
  return relativeOk ? resolve(home, p) : undefined;
}

/**
 * Files a command's first line names (behaviour.md §14.2 `file` steps): `--<field>-file <path>`
 * values (§5.4: relative to the home) and every word that is a `~/…` or absolute path.
 */
function argumentPaths(cmd: string, home: string): string[] {
  // Every command of a recorded agent comes here: take the first line without split's array.
  const nl = cmd.indexOf('\n');
  const first = nl < 0 ? cmd : cmd.slice(0, nl);
  if (!first.includes('~/') && !first.includes('-file') && !first.includes(home)) return [];
  const out: string[] = [];
  for (const m of first.matchAll(/(--[A-Za-z0-9_-]+-file\s+)?(?:"([^"]*)"|'([^']*)'|(\S+))/g)) {
    const word = m[2] ?? m[3] ?? m[4] ?? '';
    const abs = resolvePath(word, home, m[1] !== undefined);
    if (abs !== undefined && (m[1] !== undefined || word.startsWith('~') || word.startsWith(home))) out.push(abs);
  }
  return out;
}

/** A local file a trace may keep: its absolute path, its `~/…` form, and a reader. */
export interface UsedFile {
  abs: string;
  path: string;
  read(): string | undefined;
}

function underHome(paths: string[], home: string): UsedFile[] {
  return paths
    .map((abs) => ({ abs, rel: relative(home, abs) }))
    .filter(({ rel }) => rel !== '' && !rel.startsWith('..') && !isAbsolute(rel))
    .map(({ abs, rel }) => ({ abs, path: `~/${rel}`, read: () => readSmallFile(abs, home) }));
}

/** Files the command names, to read as they are before it runs (a /write must not see its own result). */
export function argumentFiles(cmd: string, home: string): UsedFile[] {
  return underHome(argumentPaths(cmd, home), home);
}

/** The local document an answer shows (head.meta.uri, `file://`): opening does not change it. */
export function documentFile(ev: OutcomeEvent, home: string): UsedFile[] {
  const uri = ev.type === 'command.finished' ? ev.result.meta?.uri : undefined;
  return uri ? openedFile(uri, home) : [];
}

/** The file of a document URI when it is a local file under the home (a `file://` URI); else none. */
export function openedFile(uri: string, home: string): UsedFile[] {
  if (!uri.startsWith('file://')) return [];
  try {
    return underHome([fileURLToPath(uri)], home);
  } catch {
    // Not a local file URL after all: nothing to keep.
    return [];
  }
}

/**
 * Regular files inside the home only, up to TRACE_FILE_STEP_BYTES; undefined for anything else (a
 * folder, gone, unreadable, or a path whose real location is outside the home). The workspace check
 * of the commands compares real paths (behaviour.md §1.4): a `~/link.md` pointing at /etc or
 * /proc/self/environ is refused by `/open`, and must not reach the trace through the recorder
 * either. The file is opened without following a last-component link and checked through its
 * descriptor, so a link swapped in after the check is not followed.
 */
function readSmallFile(abs: string, home: string): string | undefined {
  try {
    const real = realpathSync.native(abs);
    if (!isInside(real, realpathSync.native(home))) return undefined;
    const r = readAgentFile(real, TRACE_FILE_STEP_BYTES);
    return isFileRefusal(r) ? undefined : r.data.toString('utf8');
  } catch {
    // Unreadable: the replay will show the difference.
    return undefined;
  }
}
