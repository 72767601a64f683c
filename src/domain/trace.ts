import { isAgentId, VAR_NAME_RE } from './ids.js';
import type { HeadMeta } from './ticket.js';
import { cut, quoted } from './traceQuote.js';

export { QUOTE_MAX_CHARS, TRACE_LINE_MAX_BYTES, quoted } from './traceQuote.js';

/**
 * The trace file format of behaviour.md §14.2: JSONL, a header line then one step per line.
 * Pure types and a strict line parser (a damaged line is reported with its number); the
 * serialiser the recorder and `loom replay --update` share is in traceLines.ts.
 */

/** The format version this Loom writes (`loom_trace` of the header): 2 adds the queue and session fields of exec steps. */
export const TRACE_FORMAT = 2;

/** Every format version this Loom reads: a version 1 file replays and steps with what it carries. */
export const TRACE_FORMATS_READ: readonly number[] = [1, 2];

/** behaviour.md §14.2 header line. `trace_id`, `agent_id`, `topic` are what the recorder adds. */
export interface TraceHeader {
  loom_trace: number;
  created_at?: string;
  loom_version?: string;
  protocol?: string;
  note?: string | null;
  trace_id?: string;
  agent_id?: string | null;
  topic?: string | null;
}

/** The compared head fields of an /exec answer (behaviour.md §14.3); MCP steps keep ok, code, topic. */
export interface ExpectHead {
  ok?: boolean;
  code?: string | null;
  topic?: string;
  topic_type?: string;
  meta?: HeadMeta | null;
}

/** What a step expects: any field left out is not compared (a hand-written script has none). */
export interface Expect {
  status?: number;
  head?: ExpectHead;
  /** The content string (/exec: with its `re:` line; MCP: the envelope text the tool returns). */
  content?: string;
  /** The JSON error body of a refused /exec (429, 504). */
  error?: Record<string, unknown>;
}

interface StepBase {
  seq: number;
  /** Milliseconds from the start of the recording to this step's arrival; absent in scripts. */
  t_ms?: number;
}

export interface AgentStep extends StepBase { kind: 'agent'; agent_id: string }
export interface FileStep extends StepBase { kind: 'file'; agent_id: string; path: string; content: string }
export interface ExecStep extends StepBase {
  kind: 'exec';
  via: 'exec' | 'mcp';
  agent_id: string;
  topic: string;
  cmd: string;
  request_id?: string;
  expect?: Expect;
  /** From arrival to answer in the recording (queue wait included). */
  duration_ms?: number;
  /** Version 2: from arrival to start (the wait in the queue); absent for a refused command. */
  queued_ms?: number;
  /** Version 2: the topic's ticket (`t<n>`, in arrival order per topic). */
  ticket?: string;
  /** Version 2: what the command changed in its topic's session, in order (names, never values). */
  session?: TraceSessionChange[];
}

/**
 * A session change as a trace keeps it (version 2): the changes of behaviour.md §13.7 `history`,
 * with variable names and never their values. `back`: the document came back from the history (/back).
 */
export type TraceSessionChange =
  | { type: 'session.opened'; uri: string; title: string | null; back?: true }
  | { type: 'session.navigated'; block: string | null }
  | { type: 'session.closed' }
  | { type: 'session.set' | 'session.cleared'; names: string[] };
export interface WebhookStep extends StepBase { kind: 'webhook'; agent_id: string; text: string; expect?: Expect }
export interface SleepStep extends StepBase { kind: 'sleep'; ms: number }

/** One step of a trace (behaviour.md §14.2 `kind`). */
export type TraceStep = AgentStep | FileStep | ExecStep | WebhookStep | SleepStep;

/** A parsed step with the line it came from (messages name it). */
export interface ParsedStep {
  line: number;
  step: TraceStep;
}

/** A parsed trace: the header (if the file has one) and the steps in `seq` order. */
export interface Trace {
  header: TraceHeader | null;
  steps: ParsedStep[];
}

/** A damaged trace file: the 1-based line and what is wrong with it (replay exits 2). */
export class TraceFormatError extends Error {
  constructor(readonly line: number, readonly problem: string) {
    super(`line ${line}: ${problem}`);
  }
}

/**
 * The longest `sleep` step (ms): setTimeout's maximum. Node runs a longer delay after 1 ms with a
 * warning, so a trace asking for more is refused rather than silently not waiting.
 */
export const MAX_SLEEP_MS = 2 ** 31 - 1;


/** The agent a script step runs as when it names none (the CLI's and MCP's default agent). */
export const DEFAULT_TRACE_AGENT = 'default';

const KINDS = ['agent', 'file', 'exec', 'webhook', 'sleep'] as const;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function str(o: Obj, key: string, required: boolean): string | undefined {
  const v = o[key];
  if (v === undefined && !required) return undefined;
  if (typeof v !== 'string' || v === '') throw new Error(`"${key}" must be a non-empty string`);
  return v;
}

function nonNegative(o: Obj, key: string): number | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new Error(`"${key}" must be a number ≥ 0`);
  return v;
}

function parseExpect(v: unknown): Expect | undefined {
  if (v === undefined) return undefined;
  if (!isObj(v)) throw new Error('"expect" must be an object');
  if (v.status !== undefined && (typeof v.status !== 'number' || !Number.isInteger(v.status))) throw new Error('"expect.status" must be an integer');
  if (v.head !== undefined && !isObj(v.head)) throw new Error('"expect.head" must be an object');
  if (v.content !== undefined && typeof v.content !== 'string') throw new Error('"expect.content" must be a string');
  if (v.error !== undefined && !isObj(v.error)) throw new Error('"expect.error" must be an object');
  return v as Expect;
}

/**
 * An agent id a step runs as: the daemon's own rule (behaviour.md §1.2). It travels in the
 * X-Agent-Id header and in URL paths, so a CR/LF or `/` in it must stop the trace here, not turn
 * into a confusing transport error later.
 */
function agentId(o: Obj, required: boolean): string | undefined {
  const id = str(o, 'agent_id', required);
  if (id !== undefined && !isAgentId(id)) throw new Error(`"agent_id" must be an agent id (letters, digits, . _ -; up to 64) (got ${quoted(id)})`);
  return id;
}

/**
 * A file step's path: `~/…` inside the home, no `..` (a trace never writes outside the agent's home),
 * and naming a file: `~/` alone, a trailing `/`, `//` or a `.` part names a folder or nothing, which
 * no recording writes. Symlinks are the writer's business (replay/homeFile.ts): text cannot see them.
 */
function homePath(o: Obj): string {
  const p = str(o, 'path', true) as string;
  if (!p.startsWith('~/') || p.split('/').some((s) => s === '..') || p.includes('\0')) {
    throw new Error(`"path" must start with ~/ and stay inside the home (got ${quoted(p)})`);
  }
  if (p.slice(2).split('/').some((s) => s === '' || s === '.')) {
    throw new Error(`"path" must name a file: ~/ then names separated by single slashes, no . parts (got ${quoted(p)})`);
  }
  return p;
}

function sleepMs(o: Obj): number {
  if (o.ms === undefined) throw new Error('"ms" is required');
  const ms = nonNegative(o, 'ms') as number;
  if (ms > MAX_SLEEP_MS) throw new Error(`"ms" must be at most ${MAX_SLEEP_MS} (about 24.8 days) (got ${ms})`);
  return ms;
}

function parseStep(o: Obj, seq: number): TraceStep {
  const kind = o.kind;
  if (!(KINDS as readonly unknown[]).includes(kind)) throw new Error(`unknown kind ${quoted(kind)} (use ${KINDS.join(', ')})`);
  const base: StepBase = { seq, ...(o.t_ms !== undefined ? { t_ms: nonNegative(o, 't_ms') } : {}) };
  const agent = () => agentId(o, false) ?? DEFAULT_TRACE_AGENT;
  switch (kind as TraceStep['kind']) {
    case 'agent':
      return { ...base, kind: 'agent', agent_id: agentId(o, true) as string };
    case 'file':
      if (typeof o.content !== 'string') throw new Error('"content" must be a string');
      return { ...base, kind: 'file', agent_id: agent(), path: homePath(o), content: o.content };
    case 'webhook':
      return { ...base, kind: 'webhook', agent_id: agent(), text: str(o, 'text', true) as string, ...(o.expect !== undefined ? { expect: parseExpect(o.expect) } : {}) };
    case 'sleep':
      return { ...base, kind: 'sleep', ms: sleepMs(o) };
    default:
      return parseExecStep(o, base, agent());
  }
}

function parseExecStep(o: Obj, base: StepBase, agentId: string): ExecStep {
  const cmd = str(o, 'cmd', true) as string;
  if (!cmd.trimStart().startsWith('/')) throw new Error('"cmd" must start with /');
  const via = o.via ?? 'exec';
  if (via !== 'exec' && via !== 'mcp') throw new Error('"via" must be "exec" or "mcp"');
  const step: ExecStep = { ...base, kind: 'exec', via, agent_id: agentId, topic: str(o, 'topic', false) ?? 'main', cmd };
  const rid = str(o, 'request_id', false);
  if (rid !== undefined) step.request_id = rid;
  const expect = parseExpect(o.expect);
  if (expect) step.expect = expect;
  const d = nonNegative(o, 'duration_ms');
  if (d !== undefined) step.duration_ms = d;
  const q = nonNegative(o, 'queued_ms');
  if (q !== undefined) step.queued_ms = q;
  if (o.ticket !== undefined) {
    if (typeof o.ticket !== 'string' || !TICKET_RE.test(o.ticket)) throw new Error(`"ticket" must be t<number> (got ${quoted(o.ticket)})`);
    step.ticket = o.ticket;
  }
  if (o.session !== undefined) step.session = parseSession(o.session);
  return step;
}

const TICKET_RE = /^t[1-9][0-9]{0,15}$/;

/** A version 2 `session` list: each change one of TraceSessionChange, its fields checked. */
function parseSession(v: unknown): TraceSessionChange[] {
  if (!Array.isArray(v)) throw new Error('"session" must be an array of changes');
  return v.map((c, i): TraceSessionChange => {
    const at = `"session[${i}]"`;
    if (!isObj(c)) throw new Error(`${at} must be an object`);
    const text = (key: string, nullable: boolean): string | null => {
      const x = c[key];
      if (x === null && nullable) return null;
      if (typeof x !== 'string') throw new Error(`${at}.${key} must be a string${nullable ? ' or null' : ''}`);
      return x;
    };
    switch (c.type) {
      case 'session.opened':
        return { type: c.type, uri: text('uri', false) as string, title: text('title', true), ...(c.back === true ? { back: true as const } : {}) };
      case 'session.navigated':
        return { type: c.type, block: text('block', true) };
      case 'session.closed':
        return { type: c.type };
      case 'session.set':
      case 'session.cleared': {
        const names = c.names;
        if (!Array.isArray(names) || !names.every((n) => typeof n === 'string' && VAR_NAME_RE.test(n))) throw new Error(`${at}.names must be an array of variable names`);
        return { type: c.type, names: names as string[] };
      }
      default:
        throw new Error(`${at} has an unknown type ${quoted(c.type)} (use session.opened, session.navigated, session.closed, session.set, session.cleared)`);
    }
  });
}

/**
 * Parse a trace file (behaviour.md §14.2). Blank lines are skipped; the first object is the header
 * when it has `loom_trace`; a step without `seq` follows the previous one. Throws TraceFormatError
 * naming the first damaged line. Steps come back sorted by `seq`.
 */
export function parseTrace(text: string): Trace {
  return parseTraceLines(text.split('\n'));
}

/** parseTrace over lines already split at `\n` (a reader that bounds each line hands them over). */
export function parseTraceLines(lines: readonly string[]): Trace {
  let header: TraceHeader | null = null;
  const steps: ParsedStep[] = [];
  const seen = new Map<number, number>();
  let lastSeq = 0;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i].replace(/\r$/, '');
    if (raw.trim() === '') continue;
    const line = i + 1;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (err) {
      // V8 quotes the input around the fault; a bounded quote keeps a huge line off the terminal.
      throw new TraceFormatError(line, `not valid JSON (${cut((err as Error).message)})`);
    }
    if (!isObj(value)) throw new TraceFormatError(line, 'each line must be one JSON object');
    if ('loom_trace' in value) {
      if (header || steps.length > 0) throw new TraceFormatError(line, 'a header line (loom_trace) may only come first');
      if (!TRACE_FORMATS_READ.includes(value.loom_trace as number)) throw new TraceFormatError(line, `unsupported trace format ${quoted(value.loom_trace)} (this Loom reads ${TRACE_FORMATS_READ.join(' and ')})`);
      header = value as unknown as TraceHeader;
      continue;
    }
    const seq = value.seq === undefined ? lastSeq + 1 : value.seq;
    if (typeof seq !== 'number' || !Number.isInteger(seq) || seq < 1) throw new TraceFormatError(line, '"seq" must be an integer ≥ 1');
    const other = seen.get(seq);
    if (other !== undefined) throw new TraceFormatError(line, `seq ${seq} is also used on line ${other}`);
    seen.set(seq, line);
    lastSeq = seq;
    try {
      steps.push({ line, step: parseStep(value, seq) });
    } catch (err) {
      throw new TraceFormatError(line, (err as Error).message);
    }
  }
  steps.sort((a, b) => a.step.seq - b.step.seq);
  return { header, steps };
}
