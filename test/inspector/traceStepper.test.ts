import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LoomError } from '../../src/domain/errors.js';
import { stepsFromTrace, STEPPER_MAX_CHARS, STEPPER_MAX_STEPS, type StepsDocument } from '../../src/inspector/traceStepper.js';

/**
 * The stepper of behaviour.md §13.8: a recorded trace fed to the topic machine with pure
 * transitions; each step shows every topic's state, queue and session as it was after that step.
 */

type Topic = { topic: string; state: string; running: { ticket: string; cmd: string } | null; waiting: Array<{ ticket: string; position: number }>; doc: { uri: string; title: string | null; current_block: string | null } | null; session: { variables: string[]; history: string[] }; recent: Array<{ ticket: string; ok: boolean; code: string | null }> };

const topicAt = (d: StepsDocument, k: number, agent: string, topic: string): Topic => {
  const a = d.steps[k].state.agents.find((x) => x.agent_id === agent);
  return a?.topics.find((t) => t.topic === topic) as unknown as Topic;
};
/** Each step as `label | state running [waiting]` of one topic. */
const queueOf = (d: StepsDocument, agent: string, topic: string) => d.steps.map((s, k) => {
  const t = topicAt(d, k, agent, topic);
  return t ? `${t.state} ${t.running?.ticket ?? '-'} [${t.waiting.map((w) => w.ticket).join(' ')}]` : 'none';
});

const header = (v: number) => JSON.stringify({ loom_trace: v, created_at: '2026-01-01T00:00:00.000Z', loom_version: '0.1.0', protocol: '0.1', note: null, trace_id: 'trc_TEST' });
const exec = (seq: number, t: number, cmd: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ seq, t_ms: t, kind: 'exec', via: 'exec', agent_id: 'leo', topic: 'main', cmd, expect: { status: 200, head: { ok: true, code: null, topic: 'main', topic_type: 'tab', meta: null } }, duration_ms: 0, ...extra });
const trace = (v: number, ...lines: string[]) => [header(v), ...lines, JSON.stringify({ seq: 1e6, t_ms: 0, kind: 'agent', agent_id: 'leo' })].join('\n');

function refused(text: string): LoomError {
  try {
    stepsFromTrace(text);
  } catch (err) {
    if (err instanceof LoomError) return err;
    throw err;
  }
  throw new Error('stepped through a trace it should refuse');
}

describe('stepsFromTrace (behaviour.md §13.8)', () => {
  it('when a version 1 trace with a full queue is stepped, then each step shows the queue as it was: waiting grows to 5, refusals change nothing, the FIFO drains', () => {
    const d = stepsFromTrace(readFileSync('examples/traces/queue-429.jsonl', 'utf8'));
    expect(d).toMatchObject({ format: 'loom-inspector-steps', version: 1, trace_format: 1, steps_total: 17, truncated: false });
    expect(d.steps[0].label).toBe('agent leo');
    expect(queueOf(d, 'leo', 'main')).toEqual([
      'none',
      'executing t1 []', 'executing t1 [t2]', 'executing t1 [t2 t3]', 'executing t1 [t2 t3 t4]', 'executing t1 [t2 t3 t4 t5]',
      'executing t1 [t2 t3 t4 t5 t6]', 'executing t1 [t2 t3 t4 t5 t6]', 'executing t1 [t2 t3 t4 t5 t6]',
      'executing t2 [t3 t4 t5 t6]', 'executing t3 [t4 t5 t6]', 'executing t4 [t5 t6]', 'executing t5 [t6]', 'executing t6 []', 'idle - []',
      'executing t9 []', 'idle - []',
    ]);
    expect(d.steps[7].label).toBe('leo/main t7 /exec echo 7 refused QUEUE_FULL');
    expect(d.steps[9].label).toBe('leo/main t1 /exec sleep 2; echo first finished ok; t2 started');
    // Positions, times and the refusals in `recent`, as the snapshot shows them.
    const full = topicAt(d, 6, 'leo', 'main');
    expect(full.waiting.map((w) => w.position)).toEqual([1, 2, 3, 4, 5]);
    expect(topicAt(d, 8, 'leo', 'main').recent.map((r) => [r.ticket, r.code])).toEqual([['t7', 'QUEUE_FULL'], ['t8', 'QUEUE_FULL']]);
    expect(d.steps.map((s) => s.at_ms)).toEqual([...d.steps.map((s) => s.at_ms)].sort((a, b) => a - b));
  });

  it('when every golden trace is stepped, then it ends with every topic idle and a document where the trace opened one', () => {
    for (const f of readdirSync('examples/traces').filter((n) => n.endsWith('.jsonl'))) {
      const d = stepsFromTrace(readFileSync(join('examples/traces', f), 'utf8'));
      const last = d.steps.at(-1)?.state;
      expect([f, last?.agents.flatMap((a) => a.topics.map((t) => t.state))]).toEqual([f, expect.not.arrayContaining(['executing'])]);
      expect(d.steps).toHaveLength(d.steps_total);
    }
    const docs = stepsFromTrace(readFileSync('examples/traces/document-actions.jsonl', 'utf8'));
    expect(topicAt(docs, docs.steps.length - 1, 'leo', 'main').doc).toMatchObject({ uri: 'file://~/apps/notes.md' });
  });

  it('when a version 2 trace carries session changes, then each step shows the document, its history and the variable names — never a value', () => {
    // Each answer's head.meta shows the document the changes left (as the daemon sends it).
    const meta = (uri: string | null, title: string | null = null, block: string | null = null) => ({ expect: { status: 200, head: { ok: true, code: null, topic: 'main', topic_type: 'tab', meta: uri === null ? null : { uri, title, current_block: block } } } });
    const d = stepsFromTrace(trace(2,
      exec(1, 10, '/open ~/a.md', { ticket: 't1', queued_ms: 0, session: [{ type: 'session.opened', uri: 'file://~/a.md', title: 'A' }], ...meta('file://~/a.md', 'A') }),
      exec(2, 20, '/set {city} = "Reykjavik-4821"', { ticket: 't2', queued_ms: 0, session: [{ type: 'session.set', names: ['city'] }], ...meta('file://~/a.md', 'A') }),
      exec(3, 30, '/open ~/b.md#x', { ticket: 't3', queued_ms: 0, session: [{ type: 'session.opened', uri: 'file://~/b.md', title: 'B Reykjavik-4821' }, { type: 'session.navigated', block: '#x' }], ...meta('file://~/b.md', 'B Reykjavik-4821', '#x') }),
      exec(4, 40, '/back', { ticket: 't4', queued_ms: 0, session: [{ type: 'session.opened', uri: 'file://~/a.md', title: 'A', back: true }], ...meta('file://~/a.md', 'A') }),
      exec(5, 50, '/unset {city}', { ticket: 't5', queued_ms: 0, session: [{ type: 'session.cleared', names: ['city'] }, { type: 'session.closed' }], ...meta(null) }),
    ));
    expect(d.trace_format).toBe(2);
    expect(d.trace_id).toBe('trc_TEST');
    const after = (seq: number) => topicAt(d, d.steps.map((s) => s.seq).lastIndexOf(seq), 'leo', 'main');
    expect(after(1)).toMatchObject({ doc: { uri: 'file://~/a.md', title: 'A' }, session: { variables: [], history: [] } });
    expect(after(2).session).toEqual({ variables: ['city'], history: [] });
    expect(after(3)).toMatchObject({ doc: { uri: 'file://~/b.md', current_block: '#x' }, session: { variables: ['city'], history: ['file://~/a.md'] } });
    expect(after(4)).toMatchObject({ doc: { uri: 'file://~/a.md' }, session: { history: [] } });
    expect(after(5)).toMatchObject({ doc: null, session: { variables: [], history: [] } });
    // The value is in the trace (a replay sets it again) but not on the page: the /set is masked, the title too.
    const text = JSON.stringify(d);
    expect(text).not.toContain('Reykjavik-4821');
    expect(after(3).doc?.title).toBe('B {city}');
  });

  it('when commands of one millisecond are recorded in the order they ended, then the stepper finds the order the outcomes allow', () => {
    // t1 runs; t2…t6 fill the queue; at 50 ms t7 is refused (QUEUE_FULL), t1 ends and t8 is taken:
    // t7 fits only before t1's end, t8 only after it, whatever order the lines come in.
    const lines = [exec(1, 0, '/exec sleep 1', { ticket: 't1', queued_ms: 0, duration_ms: 50 })];
    for (let i = 2; i <= 6; i++) lines.push(exec(i, i, `/exec echo ${i}`, { ticket: `t${i}`, queued_ms: 48 + i, duration_ms: 60 }));
    lines.push(exec(7, 50, '/exec echo 7', { ticket: 't7', expect: { status: 429, error: { error: 'QUEUE_FULL' } } }));
    lines.push(exec(8, 50, '/exec echo 8', { ticket: 't8', queued_ms: 20, duration_ms: 70 }));
    for (const order of [lines, [...lines].reverse()]) {
      const d = stepsFromTrace(trace(2, ...order));
      const at50 = d.steps.filter((s) => s.at_ms === 50).map((s) => s.label);
      expect(at50).toEqual([
        'leo/main t7 /exec echo 7 refused QUEUE_FULL',
        'leo/main t1 /exec sleep 1 finished ok; t2 started',
        'leo/main t8 /exec echo 8 arrived, waiting #5',
      ]);
    }
  });

  it('when a trace asks for commands that would touch files or start processes, then nothing is run: the stepper only transitions', () => {
    const marker = join(tmpdir(), `loom-stepper-${process.pid}-${Date.now()}`);
    const d = stepsFromTrace(trace(1, exec(1, 1, `/exec touch ${marker}`, { duration_ms: 5 }), exec(2, 2, `/write ${marker}\nx`, { duration_ms: 5 })));
    expect(d.steps.length).toBe(5);
    expect(existsSync(marker)).toBe(false);
  });

  it('when secrets of a known shape are in commands and request ids, then the steps mask them (§13.4)', () => {
    const token = `ghp_${'A1b2C3d4'.repeat(5)}`;
    const d = stepsFromTrace(trace(1, exec(1, 1, `/exec curl -H "Authorization: Bearer ${token}" x`, { request_id: token, duration_ms: 5 })));
    expect(JSON.stringify(d)).not.toContain(token);
  });

  it.each([
    ['a line that is not JSON', `${header(1)}\n{"kind":`, /^Cannot step through this trace: line 2: not valid JSON/],
    ['an unknown kind', `${header(1)}\n{"kind":"teleport"}`, /^Cannot step through this trace: line 2: unknown kind "teleport"/],
    ['an unknown format', '{"loom_trace":9}', /^Cannot step through this trace: line 1: unsupported trace format 9/],
    ['a step that is an array', `${header(2)}\n[]`, /line 2: each line must be one JSON object$/],
    ['an unknown session change', `${header(2)}\n${exec(1, 1, '/x', { session: [{ type: 'session.hacked' }] })}`, /line 2: "session\[0\]" has an unknown type "session.hacked"/],
    ['times past any recording', `${header(2)}\n${exec(1, 1e300, '/x')}`, /^Cannot step through this trace: its times run past/],
  ])('when a trace has %s, then it is a LoomError (422) with the reason', (_what, text, message) => {
    const err = refused(text);
    expect(err.status).toBe(422);
    expect(err.message).toMatch(message);
  });

  it('when a trace is larger than the stepper reads, then it is refused before parsing', () => {
    const err = refused(`${header(1)}\n${' '.repeat(STEPPER_MAX_CHARS)}`);
    expect(err.message).toBe(`Cannot step through this trace: it is larger than ${STEPPER_MAX_CHARS} characters`);
  });

  it('when a trace has more steps than a document holds, then it is cut and says so', () => {
    const lines: string[] = [];
    for (let i = 1; i <= STEPPER_MAX_STEPS; i++) lines.push(exec(i, i * 10, '/help', { duration_ms: 1 }));
    const d = stepsFromTrace(trace(1, ...lines));
    expect(d).toMatchObject({ truncated: true, steps_total: 2 * STEPPER_MAX_STEPS + 1 });
    expect(d.steps).toHaveLength(STEPPER_MAX_STEPS);
  });

  it('when ids, topics and keys are named __proto__ or constructor, then they are agents and topics like any other', () => {
    // Written as text: a JSON `__proto__` key is an own key of the parsed line, never its prototype.
    const step = (seq: number, agent: string, topic: string) => `{"seq":${seq},"t_ms":${seq},"kind":"exec","agent_id":"${agent}","topic":"${topic}","cmd":"/help","duration_ms":1,"__proto__":{"polluted":true},"constructor":1}`;
    const d = stepsFromTrace([header(2), step(1, 'constructor', '__proto__'), step(2, 'toString', 'constructor'), '{"seq":3,"kind":"agent","agent_id":"hasOwnProperty","__proto__":{"x":1}}'].join('\n'));
    expect(d.steps.at(-1)?.state.agents.map((a) => [a.agent_id, a.topics.map((t) => t.topic)])).toEqual([['constructor', ['__proto__']], ['hasOwnProperty', []], ['toString', ['constructor']]]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(refused(`${header(2)}\n{"kind":"agent","agent_id":"__proto__"}`).message).toMatch(/line 2: "agent_id" must be an agent id/);
  });
});
