import { LoomError } from '../domain/errors.js';
import { redactCommand, redactText, shown, type ValueMasks } from '../domain/redact.js';
import { parseTopic } from '../domain/topic.js';
import { parseTrace, TraceFormatError, TRACE_FORMATS_READ, type ExecStep, type Trace } from '../domain/trace.js';
import { happeningsOf, type Happening } from '../domain/traceTimeline.js';
import { iso } from './inspectionMessages.js';
import type { RecentCommand } from './recentCommands.js';
import { StepTopic } from './traceStepTopic.js';
import { recentEntry, STEP_RECENT_MAX, topicView, traceMasks, type StepState, type StepTopicView } from './traceStepView.js';

/** The largest trace the stepper reads (UTF-16 units): a step repeats every topic, so a long trace is refused whole. */
export const STEPPER_MAX_CHARS = 32 * 1024 * 1024;
/** Steps a document holds; a longer trace is cut there (`truncated`). */
export const STEPPER_MAX_STEPS = 2000;
/** Topic states a document holds in all (steps × topics); a trace with many topics is cut sooner. */
export const STEPPER_MAX_TOPIC_STATES = 20000;
/** Times past this (ms, about 31 years) are no recording's: refused rather than drawn. */
const TIME_MAX_MS = 1e12;

/** One step of a stepped trace (behaviour.md §13.8). */
export interface TraceStepView {
  /** The trace step (its `seq`) this happening belongs to. */
  seq: number;
  label: string;
  /** ms from the start of the recording. */
  at_ms: number;
  state: StepState;
}

/** What `GET /inspect/trace/<id>` and `loom inspect <trace file>` give the page. */
export interface StepsDocument {
  format: 'loom-inspector-steps';
  version: 1;
  recorded_at: string | null;
  trace_id?: string;
  /** The trace's own format version (`loom_trace`; 1 for a file without a header). */
  trace_format: number;
  note: string | null;
  /** Steps in the trace's timeline; `steps` holds fewer when `truncated`. */
  steps_total: number;
  truncated: boolean;
  steps: TraceStepView[];
}

const bad = (problem: string) => new LoomError(422, `Cannot step through this trace: ${problem}`);

/** The trace parsed, or a LoomError naming its first damaged line. */
function parsed(text: string): Trace {
  if (typeof text !== 'string') throw bad('not text');
  if (text.length > STEPPER_MAX_CHARS) throw bad(`it is larger than ${STEPPER_MAX_CHARS} characters`);
  try {
    return parseTrace(text);
  } catch (err) {
    if (err instanceof TraceFormatError) throw bad(err.message);
    throw err;
  }
}

/**
 * behaviour.md §13.8: the steps of a recorded trace, each with every topic's state, queue and
 * session as they were after it, rebuilt by feeding the recorded commands to the daemon's own topic
 * machine with pure transitions (nothing is run, spawned or touched). A damaged, hostile or huge
 * trace is a LoomError (422) with the reason, never a crash.
 */
export function stepsFromTrace(text: string): StepsDocument {
  const trace = parsed(text);
  const header = trace.header;
  const created = typeof header?.created_at === 'string' ? Date.parse(header.created_at) : Number.NaN;
  const base = Number.isFinite(created) ? created : 0;
  const happenings = happeningsOf(trace);
  const last = happenings.at(-1);
  if (last && (last.at > TIME_MAX_MS || base + last.at > 8.64e15)) throw bad(`its times run past ${TIME_MAX_MS} ms`);
  const run = new Stepper(base, traceMasks(trace));
  const steps = run.all(happenings);
  // The header's texts belong to no agent: masked by shape (§13.4).
  const masks = null;
  return {
    format: 'loom-inspector-steps', version: 1,
    recorded_at: Number.isFinite(created) ? iso(created) : null,
    ...(typeof header?.trace_id === 'string' ? { trace_id: redactText(header.trace_id, masks) } : {}),
    trace_format: TRACE_FORMATS_READ.includes(header?.loom_trace as number) ? (header?.loom_trace as number) : 1,
    note: typeof header?.note === 'string' ? redactText(header.note, masks) : null,
    steps_total: happenings.length, truncated: steps.length < happenings.length, steps,
  };
}

/** The topics of a trace as it is stepped through, and the steps made so far. */
class Stepper {
  private readonly agents = new Map<string, Map<string, StepTopic>>();
  private readonly recent = new Map<StepTopic, RecentCommand[]>();
  /** Each topic's view at the last step, kept while it is idle (its times do not move then). */
  private readonly views = new Map<StepTopic, StepTopicView>();
  private readonly steps: TraceStepView[] = [];
  private topicStates = 0;

  constructor(private readonly base: number, private readonly masks: Map<string, ValueMasks | null>) {}

  private masksOf(agentId: string): ValueMasks | null {
    return this.masks.get(agentId) ?? null;
  }

  private full(): boolean {
    return this.steps.length >= STEPPER_MAX_STEPS || this.topicStates >= STEPPER_MAX_TOPIC_STATES;
  }

  /** Every happening in turn; within one millisecond, in an order the recorded outcomes allow. */
  all(happenings: Happening[]): TraceStepView[] {
    for (let i = 0; i < happenings.length && !this.full();) {
      let j = i;
      while (j < happenings.length && happenings[j].at === happenings[i].at) j++;
      const group = happenings.slice(i, j);
      while (group.length > 0 && !this.full()) {
        const k = group.findIndex((h) => this.fits(h, group));
        this.apply(group.splice(Math.max(0, k), 1)[0]);
      }
      i = j;
    }
    return this.steps;
  }

  private topic(agentId: string, topicName: string): StepTopic {
    let topics = this.agents.get(agentId);
    if (!topics) this.agents.set(agentId, (topics = new Map<string, StepTopic>()));
    let t = topics.get(topicName);
    if (!t) {
      const ref = parseTopic(topicName) ?? { topic: topicName, type: 'tab' as const, name: topicName };
      t = new StepTopic(agentId, ref, this.base);
      topics.set(topicName, t);
    }
    return t;
  }

  /** Whether `h` can come next as recorded: the first arrival of its topic taken or refused as it was, or the end of what runs. */
  private fits(h: Happening, group: readonly Happening[]): boolean {
    if (h.kind === 'note') return true;
    const t = this.topic(h.step.agent_id, h.step.topic);
    if (h.kind === 'end') return t.canEnd(h.step, h.cmd.refused === 'QUEUE_TIMEOUT');
    const first = group.find((g) => g.kind === 'arrive' && g.cmd.topicKey === h.cmd.topicKey);
    if (first !== h) return false;
    const taken = h.cmd.refused === null || h.cmd.refused === 'QUEUE_TIMEOUT';
    return t.wouldTake(h.step, this.base + h.at) === taken;
  }

  private apply(h: Happening): void {
    const at = this.base + h.at;
    if (h.kind === 'note') {
      if (h.step.kind === 'agent' && !this.agents.has(h.step.agent_id)) this.agents.set(h.step.agent_id, new Map());
      return this.push(h, noteLabel(h));
    }
    const s = h.step;
    const t = this.topic(s.agent_id, s.topic);
    this.views.delete(t);
    const masks = this.masksOf(s.agent_id);
    const who = `${s.agent_id}/${s.topic}`;
    const cmd = redactCommand(s.cmd, masks);
    if (h.kind === 'arrive') {
      const id = t.arrive(s, at, h.cmd.refused === null || h.cmd.refused === 'QUEUE_TIMEOUT');
      const c = t.snap.context;
      const pos = c.waiting.findIndex((w) => w.id === id);
      if (h.cmd.refused === 'QUEUE_FULL' || h.cmd.refused === 'BUSY') this.finish(t, { id, step: s, code: h.cmd.refused, at, queued: 0, ran: 0 });
      const what = c.running?.id === id ? 'arrived and started' : pos >= 0 ? `arrived, waiting #${pos + 1}` : `refused ${h.cmd.refused ?? 'on arrival'}`;
      return this.push(h, `${who} ${t.shown(id)} ${cmd} ${what}`);
    }
    const id = t.ticketOf(s) ?? '?';
    const expired = h.cmd.refused === 'QUEUE_TIMEOUT';
    const arrived = this.base + h.cmd.arrivedAt;
    const started = expired ? at : t.snap.context.running?.startedAt ?? at;
    t.end(s, at, expired);
    const ok = s.expect?.head?.ok ?? true;
    const code = expired ? 'QUEUE_TIMEOUT' : ok ? null : String(s.expect?.head?.code ?? 'failed');
    this.finish(t, { id, step: s, code, at, queued: Math.max(0, started - arrived), ran: Math.max(0, at - started) });
    const next = t.snap.context.running;
    const then = next ? `; ${t.shown(next.id)} started` : '';
    this.push(h, `${who} ${t.shown(id)} ${cmd} ${expired ? 'refused QUEUE_TIMEOUT' : `finished ${ok ? 'ok' : String(s.expect?.head?.code ?? 'failed')}`}${then}`);
  }

  /** A command's outcome joins its topic's `recent` list. */
  private finish(t: StepTopic, o: { id: string; step: ExecStep; code: string | null; at: number; queued: number; ran: number }): void {
    const list = this.recent.get(t) ?? [];
    const s = o.step;
    list.push(recentEntry(t, { ticket: o.id, cmd: s.cmd, requestId: s.request_id ?? null, via: s.via, ok: o.code === null, code: o.code, queuedMs: o.queued, durationMs: o.ran, at: o.at }, this.masksOf(s.agent_id)));
    if (list.length > STEP_RECENT_MAX) list.shift();
    this.recent.set(t, list);
  }

  /** The step: every topic's view now (a quiet topic's view of the step before is reused). */
  private push(h: Happening, label: string): void {
    const now = this.base + h.at;
    const agents = [...this.agents].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([agentId, topics]) => ({
      agent_id: agentId, home: null, installs: [] as [],
      topics: [...topics.values()].sort((a, b) => (a.ref.topic < b.ref.topic ? -1 : 1)).map((t) => this.view(t, now)),
    }));
    this.topicStates += agents.reduce((n, a) => n + a.topics.length, 0);
    this.steps.push({ seq: h.step.seq, label, at_ms: h.at, state: { at: iso(now), agents } });
  }

  private view(t: StepTopic, now: number): StepTopicView {
    const c = t.snap.context;
    const kept = this.views.get(t);
    // Only a busy topic's times move; an idle one's view changes with its own happenings (apply drops it).
    if (kept && !c.running && c.waiting.length === 0) return kept;
    const v = topicView(t, this.recent.get(t) ?? [], now, this.masksOf(t.agentId));
    this.views.set(t, v);
    return v;
  }
}

/** The label of an agent, file, webhook or sleep step. */
function noteLabel(h: Extract<Happening, { kind: 'note' }>): string {
  const s = h.step;
  switch (s.kind) {
    case 'agent':
      return `agent ${s.agent_id}`;
    case 'file':
      return shown(`file ${s.path} for ${s.agent_id}`, null);
    case 'webhook':
      return `webhook post to ${s.agent_id}`;
    default:
      return `sleep ${s.ms} ms`;
  }
}
