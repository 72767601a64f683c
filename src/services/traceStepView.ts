import { compileMasks, redactCommand, sessionMask, shown, type MaskedValue, type ValueMasks } from '../domain/redact.js';
import type { Trace } from '../domain/trace.js';
import { INSPECTOR_IDS, iso, ticketView } from './inspectionMessages.js';
import type { RecentCommand } from './recentCommands.js';
import type { StepTopic } from './traceStepTopic.js';

/**
 * What a step of a stepped trace shows (behaviour.md §13.8): each topic as the snapshot of §13.2
 * shows it — state, running and waiting tickets, document, last commands — plus its session's
 * variable names and document history. Masked as everything the inspector sends (§13.4).
 */

/** How many finished or refused commands a topic of a step lists (fewer than the live 20: a step repeats them all). */
export const STEP_RECENT_MAX = 10;

/** A topic at one step: the snapshot's topic fields (§13.2) and its session (§13.8). */
export type StepTopicView = Record<string, unknown> & { topic: string; state: string };

/** The state after one step: the snapshot's shape, with the agents and topics of the trace. */
export interface StepState {
  at: string;
  agents: Array<{ agent_id: string; home: null; installs: []; topics: StepTopicView[] }>;
}

/** One topic of a step, masked with the agent's values. */
export function topicView(t: StepTopic, recent: readonly RecentCommand[], now: number, masks: ValueMasks | null): StepTopicView {
  const c = t.snap.context;
  const s = c.session;
  return shown({
    topic: c.ref.topic, topic_type: c.ref.type, state: t.state, queue_limit: c.limits.max, wait_limit_ms: c.limits.waitMs,
    running: c.running ? { ...ticketView(c.running, now, masks), ticket: t.shown(c.running.id) } : null,
    waiting: c.waiting.map((w, i) => ({ ...ticketView(w, now, masks, c.limits.waitMs), ticket: t.shown(w.id), position: i + 1 })),
    doc: s.doc ? { uri: s.doc.uri, title: s.doc.title, current_block: s.doc.currentBlock } : null,
    shell: null,
    recent: [...recent],
    session: { variables: [...s.vars.keys()], history: s.history.map((h) => h.uri) },
  }, masks, INSPECTOR_IDS);
}

/** A finished or refused command as a topic's `recent` lists it (§13.2), its `cmd` redacted. */
export function recentEntry(t: StepTopic, facts: { ticket: string; cmd: string; requestId: string | null; via: string; ok: boolean; code: string | null; queuedMs: number; durationMs: number; at: number }, masks: ValueMasks | null): RecentCommand {
  return {
    ticket: t.shown(facts.ticket), cmd: redactCommand(facts.cmd, masks), request_id: facts.requestId, via: facts.via,
    ok: facts.ok, code: facts.code, queued_ms: facts.queuedMs, duration_ms: facts.durationMs, at: iso(facts.at),
  };
}

const SET_LINE = /^\s*(?:\/set\s+)?\{([A-Za-z_][A-Za-z0-9_]*)\}\s*=\s*(.*)$/i;
const FENCE = /^\s*(`{3,}|~{3,})\s*\{([A-Za-z_][A-Za-z0-9_]*)\}\s*$/;

function unquote(v: string): string {
  const t = v.trim();
  const q = t[0];
  return (q === '"' || q === "'") && t.length >= 2 && t.endsWith(q) ? t.slice(1, -1) : t;
}

/** The session values one `/set` of the trace assigns (`{name} = value` lines and `{name}` fences). */
function sessionValues(cmd: string): MaskedValue[] {
  const lines = cmd.split('\n');
  const out: MaskedValue[] = [];
  for (let i = 0; i < lines.length; i++) {
    const f = FENCE.exec(lines[i]);
    if (f) {
      let end = i + 1;
      while (end < lines.length && !lines[end].trim().startsWith(f[1])) end++;
      out.push([lines.slice(i + 1, end).join('\n'), sessionMask(f[2])]);
      i = end;
      continue;
    }
    const m = SET_LINE.exec(lines[i]);
    if (m) out.push([unquote(m[2]), sessionMask(m[1])]);
  }
  return out;
}

/**
 * Per agent, the session variables' values the trace holds (its `/set {name} = …` commands: a trace
 * keeps them so a replay can set them again, docs/decisions/0106): what the inspector masks in a
 * live topic is masked on its steps too.
 */
export function traceMasks(trace: Trace): Map<string, ValueMasks | null> {
  const values = new Map<string, MaskedValue[]>();
  for (const { step } of trace.steps) {
    if (step.kind !== 'exec' || !/^\s*\/set\b/i.test(step.cmd)) continue;
    const list = values.get(step.agent_id) ?? [];
    list.push(...sessionValues(step.cmd));
    values.set(step.agent_id, list);
  }
  return new Map([...values].map(([agent, list]) => [agent, compileMasks(list)]));
}
