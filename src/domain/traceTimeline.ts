import type { ExecStep, ParsedStep, Trace, TraceStep } from './trace.js';
import type { RefusalReason } from './ticket.js';

/**
 * A recorded trace as what happened, in time (behaviour.md §13.8 stepping): each exec step becomes
 * its arrival and its end (answer, or QUEUE_TIMEOUT expiry); the other steps are one happening each.
 * Pure: no machine here, only the order the stepper feeds the topic machine in.
 */

/** One thing that happened at `at` (ms from the start of the recording). */
export type Happening =
  | { kind: 'note'; at: number; step: Exclude<TraceStep, ExecStep> }
  | { kind: 'arrive'; at: number; step: ExecStep; cmd: CommandFacts }
  | { kind: 'end'; at: number; step: ExecStep; cmd: CommandFacts };

/** What the stepper needs of a recorded command besides its step. */
export interface CommandFacts {
  /** `<agent>\0<topic>`: the topic it ran in. */
  topicKey: string;
  /** Its place among the arrivals of its topic (ticket number, then seq). */
  order: readonly [number, number, number];
  /** How the topic refused it, or null when it ran. */
  refused: RefusalReason | null;
  arrivedAt: number;
  endedAt: number;
}

const REFUSALS: readonly string[] = ['QUEUE_FULL', 'QUEUE_TIMEOUT', 'BUSY'];

/** How the recording says the topic refused a command (/exec: the error body; MCP: the head's code). */
export function refusalOf(step: ExecStep): RefusalReason | null {
  const e = step.expect;
  if (!e) return null;
  const code = step.via === 'mcp' ? e.head?.code : e.status !== 200 ? e.error?.error : undefined;
  return typeof code === 'string' && REFUSALS.includes(code) ? (code as RefusalReason) : null;
}

/** `t12` → 12; a step without a ticket (version 1, a script) sorts by time and seq alone. */
const ticketNumber = (step: ExecStep): number => (step.ticket ? Number(step.ticket.slice(1)) : 0);

/**
 * The happenings of a trace, ordered by time; at equal times, in the trace's order (arrivals by
 * ticket, then seq). Steps without `t_ms` (a hand-written script) follow each other: each starts
 * when the one before it ended. The stepper decides the order within one millisecond itself.
 */
export function happeningsOf(trace: Trace): Happening[] {
  const out: Happening[] = [];
  let cursor = 0;
  for (const { step } of trace.steps as ParsedStep[]) {
    const at = step.t_ms ?? cursor;
    if (step.kind !== 'exec') {
      out.push({ kind: 'note', at, step });
      cursor = Math.max(cursor, at + (step.kind === 'sleep' ? step.ms : 0));
      continue;
    }
    const refused = refusalOf(step);
    const endedAt = at + (step.duration_ms ?? 0);
    const cmd: CommandFacts = {
      topicKey: `${step.agent_id}\u0000${step.topic}`, order: [at, ticketNumber(step), step.seq], refused, arrivedAt: at, endedAt,
    };
    out.push({ kind: 'arrive', at, step, cmd });
    // QUEUE_FULL and BUSY are answered as the command arrives: nothing more happens to it.
    if (refused === null || refused === 'QUEUE_TIMEOUT') out.push({ kind: 'end', at: endedAt, step, cmd });
    cursor = Math.max(cursor, endedAt);
  }
  return registeredFirst(out).sort(byTime);
}

/**
 * A recording writes an agent's `agent` step when its first outcome comes, with that command's
 * arrival time; a command that arrived earlier and ended later came first. The agent is shown from
 * its first arrival on.
 */
function registeredFirst(out: Happening[]): Happening[] {
  const first = new Map<string, number>();
  for (const h of out) if (h.kind === 'arrive' && !((first.get(h.step.agent_id) ?? Infinity) <= h.at)) first.set(h.step.agent_id, h.at);
  return out.map((h) => {
    if (h.kind !== 'note' || h.step.kind !== 'agent') return h;
    const at = first.get(h.step.agent_id);
    return at !== undefined && at < h.at ? { ...h, at } : h;
  });
}

/** Time, then notes (an agent registered before its first command), then arrivals, then ends, then arrival order. */
function byTime(a: Happening, b: Happening): number {
  if (a.at !== b.at) return a.at - b.at;
  const rank = (h: Happening) => (h.kind === 'note' ? 0 : h.kind === 'arrive' ? 1 : 2);
  if (rank(a) !== rank(b)) return rank(a) - rank(b);
  if (a.kind === 'note' || b.kind === 'note') return a.step.seq - b.step.seq;
  return compareOrder(a.cmd.order, b.cmd.order);
}

/** Arrival order of two commands (of one topic: time, ticket, seq). */
export function compareOrder(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}
