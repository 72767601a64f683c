import { tmpdir } from 'node:os';
import { MAX_SLEEP_MS, type Expect, type ParsedStep, type TraceStep } from '../domain/trace.js';
import { learnIds } from '../domain/traceText.js';
import { compareAnswer } from './compare.js';
import { NotSent, sendExec, sendWebhook, writeFileStep, type Target } from './send.js';

/** How one step went (behaviour.md §14.3). `failed`: it could not be sent; counted as differed. */
export type StepVerdict = 'matched' | 'differed' | 'not_compared' | 'failed';

/** One step's outcome, in `seq` order. */
export interface StepResult {
  step: TraceStep;
  agentId: string;
  verdict: StepVerdict;
  /** Unified diff of expected vs actual (differed). */
  diff?: string;
  /** Why it was not sent (failed). */
  message?: string;
  /** The answer in trace form, for `--update`. */
  actual?: Expect;
  ms: number;
}

const TMP_ROOTS = [tmpdir(), '/tmp'];

/**
 * Wait `ms`, in pieces setTimeout can hold: a longer delay would fire after 1 ms with a warning.
 * A trace's `sleep` is at most MAX_SLEEP_MS, but `--speed` below 1 can scale it past that, and a
 * long recording's `t_ms` under `--speed` can be past it anyway.
 */
async function sleep(ms: number): Promise<void> {
  const pause = (t: number) => new Promise<void>((r) => setTimeout(r, t));
  let left = Math.max(0, ms);
  for (; left > MAX_SLEEP_MS; left -= MAX_SLEEP_MS) await pause(MAX_SLEEP_MS);
  await pause(left);
}

/** Run one step against the target and judge it. An unreachable daemon is thrown (replay exits 2). */
async function runStep(step: TraceStep, agentMap: Map<string, string>, target: Target, speed: number | undefined): Promise<StepResult> {
  const started = performance.now();
  const agentId = 'agent_id' in step ? agentMap.get(step.agent_id) ?? step.agent_id : '';
  const done = (r: Omit<StepResult, 'step' | 'agentId' | 'ms'>): StepResult => ({ step, agentId, ms: performance.now() - started, ...r });
  try {
    switch (step.kind) {
      case 'agent':
        await target.agentHome(agentId);
        return done({ verdict: 'not_compared' });
      case 'file':
        await writeFileStep(step, agentId, target);
        return done({ verdict: 'not_compared' });
      case 'sleep':
        await sleep(step.ms / (speed ?? 1));
        return done({ verdict: 'not_compared' });
      default: {
        const actual = step.kind === 'exec' ? await sendExec(step, agentId, target) : await sendWebhook(step, agentId, target);
        if (!step.expect) return done({ verdict: 'not_compared', actual });
        learnIds(step.expect.content, actual.content, target.ids);
        const diff = compareAnswer(step.seq, step.expect, actual, TMP_ROOTS);
        return done({ verdict: diff === null ? 'matched' : 'differed', actual, ...(diff !== null ? { diff } : {}) });
      }
    }
  } catch (err) {
    if (err instanceof NotSent) return done({ verdict: 'failed', message: err.message });
    throw err;
  }
}

/** Recorded start and end of each step (ms); a step without `t_ms` starts when the one before it ended. */
function timeline(steps: TraceStep[]): Array<{ t: number; end: number }> {
  let prevEnd = 0;
  return steps.map((s) => {
    const t = s.t_ms ?? prevEnd;
    const end = t + (s.kind === 'exec' ? s.duration_ms ?? 0 : s.kind === 'sleep' ? s.ms : 0);
    prevEnd = Math.max(prevEnd, end);
    return { t, end };
  });
}

/**
 * `--speed`: each step starts at its recorded time scaled by 1/speed, and only once every step that
 * had ended before it started in the recording has ended here too — so steps that overlapped then
 * overlap again (QUEUE_FULL, BUSY reproduce) and steps that did not, do not. Those "ended before"
 * steps are a prefix of the steps ordered by (end, seq), which keeps the waits acyclic and linear.
 */
async function runTimed(steps: TraceStep[], run: (i: number) => Promise<StepResult>, speed: number, emit: (i: number, r: StepResult) => void): Promise<void> {
  const times = timeline(steps);
  const before = (a: number, t: number, seq: number) => times[a].end < t || (times[a].end === t && steps[a].seq < seq);
  const byEnd = steps.map((_, i) => i).sort((a, b) => times[a].end - times[b].end || steps[a].seq - steps[b].seq);
  const opened: Array<() => void> = [];
  const ended = steps.map(() => new Promise<void>((r) => opened.push(r)));
  // prefix[k]: the first k steps in end order have ended.
  const prefix: Array<Promise<unknown>> = [Promise.resolve()];
  for (let k = 0; k < byEnd.length; k++) prefix.push(Promise.all([prefix[k], ended[byEnd[k]]]));
  const t0 = performance.now();
  await Promise.all(steps.map(async (s, i) => {
    let lo = 0;
    let hi = byEnd.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (before(byEnd[mid], times[i].t, s.seq)) lo = mid + 1;
      else hi = mid;
    }
    await prefix[lo];
    await sleep(t0 + times[i].t / speed - performance.now());
    try {
      emit(i, await run(i));
    } finally {
      opened[i]();
    }
  }));
}

/**
 * Run the steps (behaviour.md §14.3): one after another in `seq` order, or with `--speed` on the
 * recorded timeline. Results reach `report` in `seq` order as soon as each and all before it are done.
 */
export async function runSteps(parsed: ParsedStep[], opts: { target: Target; agentMap: Map<string, string>; speed?: number }, report: (r: StepResult) => void): Promise<StepResult[]> {
  const steps = parsed.map((p) => p.step);
  const results = new Array<StepResult>(steps.length);
  let next = 0;
  const emit = (i: number, r: StepResult) => {
    results[i] = r;
    while (next < results.length && results[next]) report(results[next++]);
  };
  const run = (i: number) => runStep(steps[i], opts.agentMap, opts.target, opts.speed);
  if (opts.speed === undefined) {
    for (let i = 0; i < steps.length; i++) emit(i, await run(i));
  } else {
    await runTimed(steps, run, opts.speed, emit);
  }
  return results;
}

