import { initialTransition, transition, type SnapshotFrom } from 'xstate';
import { QUEUE_MAX, QUEUE_WAIT_MS } from '../domain/limits.js';
import type { SessionChange, SessionState } from '../domain/session.js';
import type { ExecResult } from '../domain/ticket.js';
import type { TopicRef } from '../domain/topic.js';
import type { ExecStep, TraceSessionChange } from '../domain/trace.js';
import { topicQueueMachine, type TopicQueueEvent } from '../machines/topicQueue.js';

type TopicSnapshot = SnapshotFrom<typeof topicQueueMachine>;

/**
 * One topic of a trace being stepped through (behaviour.md §13.8): the daemon's own topic machine
 * (machines/topicQueue.ts), advanced with xstate's pure `transition` — its actions (running a
 * command, timers, the shell) come back as values and are never executed. What the page shows of
 * the topic is read from the machine's snapshot after each event.
 */
export class StepTopic {
  snap: TopicSnapshot;
  /** The machine's ticket id of each recorded command that arrived, by the step's seq. */
  private readonly bySeq = new Map<number, string>();
  /** The id shown for a machine ticket: the recorded one (version 2), else the machine's own. */
  private readonly shownIds = new Map<string, string>();

  constructor(readonly agentId: string, readonly ref: TopicRef, now: number) {
    [this.snap] = initialTransition(topicQueueMachine, { agentId, ref, maxWaiting: QUEUE_MAX, waitMs: QUEUE_WAIT_MS, now });
  }

  get state(): string {
    return String(this.snap.value);
  }

  /** The id a ticket is shown with. */
  shown(ticketId: string): string {
    return this.shownIds.get(ticketId) ?? ticketId;
  }

  /** The machine's id of a recorded command that has arrived (undefined before). */
  ticketOf(step: ExecStep): string | undefined {
    return this.bySeq.get(step.seq);
  }

  private arrival(step: ExecStep, at: number): TopicQueueEvent {
    const ticket = { cmd: step.cmd, requestId: step.request_id ?? null, via: step.via, queuedAt: at, startedAt: null };
    return step.via === 'mcp' ? { type: 'command.try', ticket } : { type: 'command.arrive', ticket };
  }

  /** Whether the topic, as it is, would take `step` in (run or queue it) rather than refuse it. */
  wouldTake(step: ExecStep, at: number): boolean {
    const [next] = transition(topicQueueMachine, this.snap, this.arrival(step, at));
    const id = `t${next.context.issued}`;
    return next.context.running?.id === id || next.context.waiting.some((t) => t.id === id);
  }

  /** The command arrives (`take`: as the recording says it was taken in; a refusal is given its id only). */
  arrive(step: ExecStep, at: number, take: boolean): string {
    // A recorded refusal the topic would now take (an arrival the trace does not hold filled the
    // queue) changes nothing in the queue, as it changed nothing in the recording.
    const fed = take || !this.wouldTake(step, at);
    if (fed) [this.snap] = transition(topicQueueMachine, this.snap, this.arrival(step, at));
    const id = fed ? `t${this.snap.context.issued}` : `refused-${step.seq}`;
    this.bySeq.set(step.seq, id);
    if (step.ticket) this.shownIds.set(id, step.ticket);
    return id;
  }

  /** Whether the recorded end of `step` fits now: it runs (an answer) or waits (a QUEUE_TIMEOUT). */
  canEnd(step: ExecStep, expired: boolean): boolean {
    const id = this.bySeq.get(step.seq);
    if (id === undefined) return false;
    return expired ? this.snap.context.waiting.some((t) => t.id === id) : this.snap.context.running?.id === id;
  }

  /** The command's answer at `at`: first the session changes it made, then its end (as the daemon sends them). */
  end(step: ExecStep, at: number, expired: boolean): void {
    const ticketId = this.bySeq.get(step.seq);
    if (ticketId === undefined) return;
    if (expired) {
      [this.snap] = transition(topicQueueMachine, this.snap, { type: 'command.expire', ticketId });
      return;
    }
    for (const c of this.changesOf(step)) this.change(c, at);
    const head = step.expect?.head;
    const result: ExecResult = { ok: head?.ok ?? true, code: (head?.code ?? null) as ExecResult['code'], body: '', meta: null, topic: this.ref.topic, topicType: this.ref.type };
    [this.snap] = transition(topicQueueMachine, this.snap, { type: 'command.done', ticketId, result, at });
  }

  private change(change: SessionChange, at: number): void {
    const sessionId = this.snap.context.session.id;
    [this.snap] = transition(topicQueueMachine, this.snap, { type: 'session.change', sessionId, change, at });
  }

  /**
   * The session changes of a step: the recorded ones (version 2), then whatever the answer's
   * document (`head.meta`) still says differently — all a version 1 step carries, and what a
   * document opened before the recording began shows.
   */
  private changesOf(step: ExecStep): SessionChange[] {
    let session = this.snap.context.session;
    const out: SessionChange[] = [];
    const add = (c: SessionChange) => {
      out.push(c);
      session = applyLocal(session, c);
    };
    for (const c of step.session ?? []) add(sessionChange(c, session));
    const meta = step.expect?.head?.meta;
    if (meta === undefined || this.ref.type === 'hub') return out;
    const doc = session.doc;
    if (meta === null) {
      if (doc) add({ type: 'session.closed' });
    } else if (typeof meta.uri === 'string') {
      const title = typeof meta.title === 'string' ? meta.title : null;
      const block = typeof meta.current_block === 'string' ? meta.current_block : null;
      if (!doc || doc.uri !== meta.uri || doc.title !== title) add(sessionChange({ type: 'session.opened', uri: meta.uri, title }, session));
      if ((session.doc?.currentBlock ?? null) !== block) add({ type: 'session.navigated', block });
    }
    return out;
  }
}

/** The session after `c`, as the topic will have it (only what changesOf compares: the document). */
function applyLocal(s: SessionState, c: SessionChange): SessionState {
  if (c.type === 'session.opened') return { ...s, doc: c.doc };
  if (c.type === 'session.closed') return { ...s, doc: null };
  if (c.type === 'session.navigated' && s.doc) return { ...s, doc: { ...s.doc, currentBlock: c.block } };
  return s;
}

/**
 * A recorded change as the topic machine takes it. Variables come by name: their values were never
 * recorded, so each is set to an empty string (the page shows names only).
 */
export function sessionChange(c: TraceSessionChange, s: SessionState): SessionChange {
  switch (c.type) {
    case 'session.opened': {
      const doc = { uri: c.uri, title: c.title, currentBlock: null, display: c.uri };
      const from = s.doc && !c.back ? { push: { uri: s.doc.uri, anchor: s.doc.currentBlock, source: null } } : {};
      return { type: c.type, doc, pageShortcuts: new Map(), baseDir: s.baseDir, ...from, ...(c.back ? { pop: true as const } : {}) };
    }
    case 'session.navigated':
      return { type: c.type, block: c.block };
    case 'session.closed':
      return { type: c.type };
    case 'session.set':
      return { type: c.type, scope: 'session', values: c.names.map((n) => [n, ''] as const) };
    case 'session.cleared':
      return { type: c.type, scope: 'session', names: c.names };
  }
}
