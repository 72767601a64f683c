import { sameJson } from './stepShape.js';
import type { Expect, ExecStep, TraceStep } from './trace.js';

/*
 * Writing trace lines (behaviour.md §14.2): one step as its JSON line, and StepLines, which makes the
 * lines of a recording's exec steps without re-serialising an answer's content for each.
 */

/** One line of a trace file (no newline): the step as JSON with its fields in the documented order. */
export function stepLine(step: TraceStep): string {
  return JSON.stringify(step);
}

/** What stands in for an answer's content while the rest of its step is made JSON (StepLines). */
const CONTENT_SLOT = '\u0000content\u0000';
const CONTENT_SLOT_JSON = JSON.stringify(CONTENT_SLOT);
/** What follows the content in a step's JSON as execStep builds it: the end of `expect`, then `duration_ms`, `queued_ms`, `ticket`. */
const AFTER_CONTENT = /^\},"duration_ms":\d+(?:,"queued_ms":\d+)?(?:,"ticket":"t\d+")?\}$/;

/** The numbers and ticket written after the content: they differ from step to step, like `seq` and `t_ms`. */
const TAIL_KEYS: ReadonlySet<string> = new Set(['seq', 't_ms', 'duration_ms', 'queued_ms', 'ticket']);
/** A ticket id JSON writes as it is (`"t12"`): nothing to escape. */
const PLAIN_TICKET = /^t\d+$/;

/** The JSON after an exec step's content, as JSON.stringify writes it for the steps execStep builds. */
function tailOf(step: ExecStep): string {
  const queued = step.queued_ms === undefined ? '' : `,"queued_ms":${step.queued_ms}`;
  const ticket = step.ticket === undefined ? '' : `,"ticket":"${step.ticket}"`;
  return `},"duration_ms":${step.duration_ms}${queued}${ticket}}`;
}

/** A trace line as pieces (StepLines.parts): `head`, the content's JSON as bytes, `tail`, in that order. */
export interface LineParts {
  head: string;
  content: Buffer;
  tail: string;
}

/** Topics whose last step's shape StepLines keeps (a recording over more starts over: a memory, not a record). */
const SHAPES_MAX = 64;

/** Whether a number is written the same by String as by JSON.stringify. */
const finite = (n: unknown): boolean => typeof n === 'number' && Number.isFinite(n);

/**
 * Whether exec step `b` makes the same JSON as `a` but for `seq`, `t_ms`, the numbers and ticket
 * after the answer, and the answer's content: the same keys in the same order and the same values
 * everywhere else.
 */
function sameShape(a: ExecStep, b: ExecStep): boolean {
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i] as keyof ExecStep;
    if (k !== kb[i]) return false;
    if (TAIL_KEYS.has(k)) continue;
    const same = k === 'expect' ? sameJson(a.expect, b.expect, (key, depth) => depth === 0 && key === 'content') : sameJson(a[k], b[k]);
    if (!same) return false;
  }
  return true;
}

/**
 * {@link stepLine} for a recording, remembering the last answer's content as encoded JSON: an agent
 * that asks the same thing again (polling `/info`, `/events`, `/help`) gets the same content, and its
 * JSON bytes (most of a line) are neither made nor encoded again; the writer gets the same
 * Buffer for every step that repeats it. The rest of the step is made JSON with a slot in place of
 * the content; the slot must occur once, followed only by `}` and `duration_ms`, so no text of the
 * step itself (a command may hold the same characters) is taken for it. Any other shape, or a step
 * without content, is one plain string; either way the bytes are those `stepLine` gives.
 *
 * It also keeps, per topic, the last step's JSON between `t_ms` and the content: a step that differs
 * from it only in `seq`, `t_ms`, its tail (TAIL_KEYS) and content (the same command again, with the same
 * head) reuses it, checked value by value (stepShape.ts), because JSON.stringify of the step is
 * most of what a line costs to make.
 */
export class StepLines {
  private content: string | undefined;
  private contentBytes: Buffer | undefined;
  /** Per topic: its last exec step and that step's JSON from after `t_ms` up to the content. */
  private readonly shapes = new Map<string, { step: ExecStep; middle: string }>();

  parts(step: TraceStep): string | LineParts {
    const expect = step.kind === 'exec' ? step.expect : undefined;
    const content = expect?.content;
    if (step.kind !== 'exec' || expect === undefined || content === undefined) return JSON.stringify(step);
    const numbers = finite(step.seq) && finite(step.t_ms) && finite(step.duration_ms) && (step.queued_ms === undefined || finite(step.queued_ms)) && (step.ticket === undefined || PLAIN_TICKET.test(step.ticket));
    const start = `{"seq":${step.seq},"t_ms":${step.t_ms}`;
    const end = numbers ? tailOf(step) : '';
    const known = numbers ? this.shapes.get(step.topic) : undefined;
    let head: string;
    let tail: string;
    if (known && sameShape(known.step, step)) {
      head = start + known.middle;
      tail = end;
    } else {
      const made = this.slotted(step, expect, content);
      if (typeof made === 'string') return made;
      ({ head, tail } = made);
      if (numbers && head.startsWith(start) && tail === end) {
        if (this.shapes.size >= SHAPES_MAX && !this.shapes.has(step.topic)) this.shapes.clear();
        this.shapes.set(step.topic, { step, middle: head.slice(start.length) });
      }
    }
    if (content !== this.content || this.contentBytes === undefined) {
      this.content = content;
      this.contentBytes = Buffer.from(JSON.stringify(content));
    }
    return { head, content: this.contentBytes, tail };
  }

  /** The step made JSON with the slot for its content, cut around it; the whole line when it has another shape. */
  private slotted(step: ExecStep, expect: Expect, content: string): string | { head: string; tail: string } {
    expect.content = CONTENT_SLOT;
    let rest: string;
    try {
      rest = JSON.stringify(step);
    } finally {
      expect.content = content;
    }
    const at = rest.lastIndexOf(CONTENT_SLOT_JSON);
    const tail = at < 0 ? '' : rest.slice(at + CONTENT_SLOT_JSON.length);
    // The slot once only (a command may hold the same text), and only the step's end after it.
    if (rest.indexOf(CONTENT_SLOT_JSON) !== at || !AFTER_CONTENT.test(tail)) return JSON.stringify(step);
    return { head: rest.slice(0, at), tail };
  }
}
