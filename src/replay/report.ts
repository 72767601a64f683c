import { cmdDisplay } from '../domain/output.js';
import { escapeControls } from '../domain/text.js';
import type { StepResult } from './run.js';

/** Counts of behaviour.md §14.3's summary line. */
export interface Summary {
  steps: number;
  matched: number;
  differed: number;
  not_compared: number;
}

const MARK = { matched: '✓', differed: '✗', failed: '✗', not_compared: '·' } as const;

/** What a step is, in a few words: `main /open ~/a.md`, `webhook leo "deploy done"`, `file ~/a.md`. */
export function stepLabel(r: StepResult, manyAgents: boolean): string {
  const s = r.step;
  const who = manyAgents && 'agent_id' in s ? `${r.agentId} ` : '';
  switch (s.kind) {
    case 'exec':
      return `${who}${s.topic}${s.via === 'mcp' ? ' (mcp)' : ''} ${cmdDisplay(s.cmd)}`;
    case 'webhook':
      return `webhook ${r.agentId} ${JSON.stringify(cmdDisplay(s.text))}`;
    case 'file':
      return `file ${who}${s.path}`;
    case 'agent':
      return `agent ${r.agentId}`;
    default:
      return `sleep ${s.ms} ms`;
  }
}

/**
 * A refusal in this replay's answer, after the step's label (` → 429 QUEUE_FULL`, ` → BUSY`): a
 * trace that reproduces the queue's refusals shows them on its ✓ lines, not only when they differ.
 */
function refusalNote(r: StepResult): string {
  const a = r.actual;
  if (!a) return '';
  if (a.status !== undefined && a.status !== 200) {
    const code = typeof a.error?.error === 'string' && /^[A-Z_]+$/.test(a.error.error) ? ` ${a.error.error}` : '';
    return ` → ${a.status}${code}`;
  }
  return a.head?.code === 'BUSY' ? ' → BUSY' : '';
}

/**
 * The text of one step (behaviour.md §14.3): its line, then the diff or the reason it was not sent.
 * Everything in it comes from the trace or the daemon, so control characters are shown escaped
 * (a hostile trace must not drive the terminal); only the diff's own line breaks stay.
 */
export function stepText(r: StepResult, manyAgents: boolean): string {
  const lines = [`${MARK[r.verdict]} ${r.step.seq} ${escapeControls(stepLabel(r, manyAgents))}${refusalNote(r)}`];
  if (r.message) lines.push(`  not sent: ${escapeControls(r.message)}`);
  if (r.diff) lines.push(...r.diff.split('\n').map(escapeControls));
  return lines.join('\n');
}

/** One JSON object per step (`--json`; print it with terminalJson). */
export function stepJson(r: StepResult): Record<string, unknown> {
  const s = r.step;
  return {
    seq: s.seq, kind: s.kind, result: r.verdict,
    ...('agent_id' in s ? { agent_id: r.agentId } : {}),
    ...(s.kind === 'exec' ? { via: s.via, topic: s.topic, cmd: cmdDisplay(s.cmd) } : {}),
    ...(s.kind === 'file' ? { path: s.path } : {}),
    ...(r.actual?.status !== undefined ? { status: r.actual.status } : {}),
    ...(r.diff ? { diff: r.diff } : {}),
    ...(r.message ? { message: r.message } : {}),
    ms: Math.round(r.ms * 10) / 10,
  };
}

export function summarise(results: StepResult[]): Summary {
  const count = (f: (r: StepResult) => boolean) => results.filter(f).length;
  return {
    steps: results.length,
    matched: count((r) => r.verdict === 'matched'),
    differed: count((r) => r.verdict === 'differed' || r.verdict === 'failed'),
    not_compared: count((r) => r.verdict === 'not_compared'),
  };
}

/** `N steps: N matched, N differed, N not compared`. */
export function summaryLine(s: Summary): string {
  return `${s.steps} ${s.steps === 1 ? 'step' : 'steps'}: ${s.matched} matched, ${s.differed} differed, ${s.not_compared} not compared`;
}
