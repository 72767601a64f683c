import { describe, expect, it } from '@jest/globals';
import type { TraceStep } from '../../src/domain/trace.js';
import { StepLines, stepLine } from '../../src/domain/traceLines.js';
import { scrub, ScrubMemo, type Secret } from '../../src/domain/traceText.js';

/**
 * The recorder's memory of the last answer (recording cost): a line built with a reused
 * content JSON must be the same bytes as JSON.stringify of the step, for every kind of step, and a
 * remembered scrub must never hand back an answer scrubbed under another context.
 */
const exec = (content: string, extra: Record<string, unknown> = {}): TraceStep => ({
  seq: 3, t_ms: 12, kind: 'exec', via: 'exec', agent_id: 'leo', topic: 'main', cmd: '/help', ...extra,
  expect: { status: 200, head: { ok: true, code: null, topic: 'main', topic_type: 'tab', meta: null }, content },
  duration_ms: 4,
} as TraceStep);

describe('StepLines', () => {
  it('when the same content repeats, and when it changes, then every line equals stepLine of its step', () => {
    const lines = new StepLines();
    const tricky = 'quote " backslash \\ tab \t nul \u0000 line\u2028sep lone \ud800 é 🙂\n';
    const steps: TraceStep[] = [
      exec('re: /help\nCommands: …\n'),
      exec('re: /help\nCommands: …\n', { seq: 4 }),
      exec(`${'re: /help\nCommands: …\n'}`, { seq: 5, request_id: 'r-"1"' }),
      exec(tricky, { seq: 6 }),
      exec(tricky, { seq: 7, cmd: tricky }),
      exec('', { seq: 8 }),
      { seq: 9, t_ms: 1, kind: 'exec', via: 'mcp', agent_id: 'leo', topic: 'main', cmd: '/info', expect: { status: 200, head: { ok: true, code: null, topic: 'main' }, content: 'x' }, duration_ms: 0 },
      { seq: 10, t_ms: 1, kind: 'exec', via: 'exec', agent_id: 'leo', topic: 'main', cmd: '/info', expect: { status: 429, error: { error: 'Queue full', queue_depth: 5 } }, duration_ms: 0 },
      { seq: 11, t_ms: 2, kind: 'webhook', agent_id: 'leo', text: 'hi', expect: { status: 202 } },
      { seq: 12, t_ms: 2, kind: 'file', agent_id: 'leo', path: '~/a.md', content: tricky },
      { seq: 13, t_ms: 2, kind: 'agent', agent_id: 'leo' },
      // Keys in another order than execStep builds them: the plain path, same bytes.
      { seq: 14, kind: 'exec', t_ms: 2, via: 'exec', agent_id: 'leo', topic: 'main', cmd: '/x', duration_ms: 1, expect: { content: 'c', status: 200 } } as TraceStep,
      { seq: 15, t_ms: 2, kind: 'exec', via: 'exec', agent_id: 'leo', topic: 'main', cmd: '/x', expect: { content: 'c' }, duration_ms: 1 } as TraceStep,
      // Text that looks like the slot the content is swapped through: in the command, and after the content.
      exec('same', { seq: 16, cmd: '/say \u0000content\u0000' }),
      { seq: 17, t_ms: 2, kind: 'exec', via: 'exec', agent_id: 'leo', topic: 'main', cmd: '/x', expect: { status: 200, content: 'same', note: '\u0000content\u0000' }, duration_ms: 1 } as TraceStep,
      exec('\u0000content\u0000', { seq: 18 }),
      // Version 2: the session changes before the answer, the wait and the ticket after it.
      { ...exec('v2', { seq: 19, session: [{ type: 'session.set', names: ['a'] }] }), queued_ms: 3, ticket: 't9' } as TraceStep,
      { ...exec('v2', { seq: 20 }), queued_ms: 0, ticket: 't10' } as TraceStep,
      { ...exec('v2', { seq: 21 }), ticket: 't11' } as TraceStep,
      // A ticket JSON would escape: the plain path.
      { ...exec('v2', { seq: 22 }), ticket: 't"1' } as TraceStep,
    ];
    for (const step of steps) {
      const before = JSON.stringify(step);
      // The pieces the recorder writes, joined, are the line's bytes.
      const p = lines.parts(step);
      const bytes = typeof p === 'string' ? Buffer.from(p) : Buffer.concat([Buffer.from(p.head), p.content, Buffer.from(p.tail)]);
      expect(bytes.toString('utf8')).toBe(stepLine(step));
      // The step is left as it was (its content is swapped out and back while the line is made).
      expect(JSON.stringify(step)).toBe(before);
    }
  });

  it('when a topic\'s steps repeat with one thing changed at a time, then every line still equals stepLine (the per-topic shape memory)', () => {
    const lines = new StepLines();
    const meta = { uri: 'file://~/a.md', title: 'A "t"', current_block: null };
    const base = (seq: number, extra: Record<string, unknown> = {}, head: Record<string, unknown> = {}) => ({
      seq, t_ms: seq * 7, kind: 'exec', via: 'exec', agent_id: 'leo', topic: 'main', cmd: '/help', ...extra,
      expect: { status: 200, head: { ok: true, code: null, topic: 'main', topic_type: 'tab', meta: null, ...head }, content: 'same' },
      duration_ms: seq,
    }) as TraceStep;
    class NotPlain { toJSON() { return 'not-plain'; } }
    const steps: TraceStep[] = [
      base(1), base(2), base(3), base(4, { cmd: '/info' }), base(5, { cmd: '/info' }), base(6, { agent_id: 'ann' }),
      base(7, { via: 'mcp' }), base(8, { request_id: 'r1' }), base(9, { request_id: 'r2' }), base(10),
      base(11, {}, { ok: false, code: 'NOT_FOUND' }), base(12, {}, { meta }), base(13, {}, { meta: { ...meta } }),
      base(14, {}, { meta: { ...meta, title: 'B' } }), base(15, {}, { meta: { current_block: null, uri: meta.uri, title: meta.title } }),
      base(16, {}, { extra: 1 }), base(17, {}, { extra: [1, 2] }), base(18, {}, { extra: { 0: 1, 1: 2 } }), base(19, {}, { extra: new NotPlain() }),
      base(20, {}, { extra: new NotPlain() }), base(21, {}, { extra: undefined }), base(22), base(23, { topic: 'other' }), base(24),
      { ...base(25), t_ms: 1.5 } as TraceStep, { ...base(26), duration_ms: Number.NaN } as TraceStep, { ...base(27), seq: -0 } as TraceStep,
      { ...base(28), expect: { status: 200, content: 'same', head: { ok: true, code: null, topic: 'main', topic_type: 'tab', meta: null } } } as TraceStep,
      { seq: 29, kind: 'exec', t_ms: 1, via: 'exec', agent_id: 'leo', topic: 'main', cmd: '/help', expect: { status: 200, head: { ok: true, code: null, topic: 'main', topic_type: 'tab', meta: null }, content: 'same' }, duration_ms: 1 } as TraceStep,
      base(30), base(31),
      // A `content` key below the answer's own is compared like any other.
      base(32, {}, { content: 'x' }), base(33, {}, { content: 'y' }),
      // Version 2 tails: the shape is kept while the wait and ticket change, and not across their presence.
      { ...base(34), queued_ms: 0, ticket: 't1' } as TraceStep, { ...base(35), queued_ms: 7, ticket: 't2' } as TraceStep,
      { ...base(36), ticket: 't3' } as TraceStep, { ...base(37), queued_ms: 1.5, ticket: 't4' } as TraceStep,
      { ...base(38, { session: [{ type: 'session.closed' }] }), queued_ms: 0, ticket: 't5' } as TraceStep,
      { ...base(39, { session: [{ type: 'session.set', names: ['b'] }] }), queued_ms: 0, ticket: 't6' } as TraceStep,
    ];
    for (const step of steps) {
      const p = lines.parts(step);
      const text = typeof p === 'string' ? p : `${p.head}${p.content.toString('utf8')}${p.tail}`;
      expect(text).toBe(stepLine(step));
    }
  });

  it('when the content repeats, then parts hands out the same encoded Buffer; a new content gets a new one', () => {
    const lines = new StepLines();
    const a = lines.parts(exec('re: /help\nsame é\n'));
    const b = lines.parts(exec('re: /help\nsame é\n', { seq: 4, request_id: 'r2' }));
    const c = lines.parts(exec('other'));
    if (typeof a === 'string' || typeof b === 'string' || typeof c === 'string') throw new Error('expected parts');
    expect(b.content).toBe(a.content);
    expect(c.content).not.toBe(a.content);
    expect(c.content.toString()).toBe(JSON.stringify('other'));
  });
});

describe('ScrubMemo', () => {
  it('when the text or any part of the context changes, then the answer is scrubbed again; else it is the same', () => {
    const memo = new ScrubMemo();
    const text = 'home /home/u/leo/a.md on 127.0.0.1:4567 with s3cret-value';
    const secrets: Secret[] = [['TOKEN', 's3cret-value']];
    const other: Secret[] = [['OTHER', 'on 127']];
    const contexts = [
      { home: '/home/u/leo', port: 4567, secrets },
      { home: '/home/u/leo', port: 4567, secrets },
      { home: '/home/u/mia', port: 4567, secrets },
      { home: '/home/u/leo', port: 9999, secrets },
      { home: '/home/u/leo', port: 4567, secrets: other },
      { home: '/home/u/leo', port: 4567 },
    ];
    for (const ctx of contexts) expect(memo.scrub(text, ctx)).toBe(scrub(text, ctx));
    expect(memo.scrub(`${text}!`, contexts[0])).toBe(scrub(`${text}!`, contexts[0]));
    expect(memo.scrub(text, contexts[0])).not.toContain('s3cret-value');
  });
});
